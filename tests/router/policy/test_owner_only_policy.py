"""The router's side of information flow (issue 29): a command whose origin `holds` owner-only
data the agent found in it is refused as a read of a tainted turn and held as a write; and
autonomy's deletes wait for the owner."""

from __future__ import annotations

from protocol.origin import AUTONOMY, OWNER, Origin
from tests.router.policy.test_whose_words_policy import decide, policy

HOLDS = ("its query carries your memory 'door_code', which is for you only",)
PAGE = ("FETCH_POST at://did:plc:mallory/app.bsky.feed.post/1",)


def test_a_tainted_read_carrying_owner_only_data_is_refused_and_a_clean_one_runs():
    check = policy()
    tainted = Origin(OWNER, "console", taint=PAGE, holds=HOLDS)
    clean = Origin(OWNER, "console", holds=HOLDS)
    assert decide(check, "SEARCH_POSTS", {"query": "559031"}, tainted) == "owner_only_data"
    assert decide(check, "FETCH_POST", {"post_id": "at://x.test/app.bsky.feed.post/1"}, tainted) == "owner_only_data"
    assert decide(check, "SEARCH_POSTS", {"query": "559031"}, clean) == "runs"


def test_a_write_carrying_owner_only_data_waits_even_in_a_clean_turn_with_the_owners_words():
    words = ("my door code is 559031",)
    held = Origin(OWNER, "console", owner_words=words, holds=HOLDS)
    assert decide(policy(), "CREATE_POST", {"platform": "bsky", "text": "my door code is 559031"}, held) == (
        "approval_required")
    unheld = Origin(OWNER, "console", owner_words=words)
    assert decide(policy(), "CREATE_POST", {"platform": "bsky", "text": "my door code is 559031"}, unheld) == "runs"


def test_autonomys_deletes_wait_for_the_owner():
    autonomy = Origin(AUTONOMY, "autonomy", platform="moltbook", taint=("MOLTBOOK_FEED general",))
    assert decide(policy(), "DELETE_POST", {"platform": "moltbook", "post_id": "p1"}, autonomy) == "approval_required"


def test_holds_travel_on_the_wire():
    origin = Origin(OWNER, "console", holds=HOLDS)
    assert Origin.from_dict(origin.to_dict()) == origin
    assert "holds" not in Origin(OWNER, "console").to_dict()  # an envelope without findings is as before
