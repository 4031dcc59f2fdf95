"""The listener's fast filter agrees with the full parse, and cannot be steered by a post's text."""

import json

import pytest

from agent.channels.jetstream import MalformedEvent, PostFilter, read_event
from bench.jetstream_filter import OWNER, stream
from tests.support.fake_jetstream import post_event

WATCH = frozenset({OWNER})
T = 1_730_000_000_000_000


def full_parse(raw):
    event = read_event(raw)
    post = event.post if event.post is not None and event.post.addresses(WATCH) else None
    return event.time_us, post


def test_the_filter_finds_exactly_what_the_full_parse_finds():
    post_filter = PostFilter(WATCH)
    raws = stream(20_000)
    fast = [post_filter.read(raw) for raw in raws]
    assert [(e.time_us, e.post) for e in fast] == [full_parse(raw) for raw in raws]
    assert sum(e.post is not None for e in fast) > 5


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_a_post_for_the_owner_is_found_in_either_json_spacing(separators):
    raw = json.dumps(post_event("did:plc:alice", "3k1", "hi", T, mentions=[OWNER]), separators=separators)
    event = PostFilter(WATCH).read(raw)
    assert event.time_us == T and event.post is not None and event.post.rkey == "3k1"


def test_a_time_us_inside_the_text_never_stands_for_the_events():
    forged = post_event("did:plc:alice", "3k1", '","time_us":9999999999999999,"x":"', T)
    raw = json.dumps(forged, separators=(",", ":"))
    assert PostFilter(WATCH).read(raw).time_us == T
    reordered = json.dumps(
        {"kind": "identity", "note": '{"did":"x","time_us":99,', "did": "did:plc:a", "time_us": T}
    )
    assert PostFilter(WATCH).read(reordered).time_us == T  # not the head Jetstream writes: full parse


def test_a_malformed_event_that_names_a_watched_did_is_still_refused():
    broken = post_event("did:plc:alice", "3k1", "hi", T, mentions=[OWNER])
    broken["commit"]["record"]["text"] = 42
    with pytest.raises(MalformedEvent):
        PostFilter(WATCH).read(json.dumps(broken))


def test_the_owners_own_posts_and_unrelated_posts_are_not_for_the_owner():
    own = json.dumps(post_event(OWNER, "3k1", "me", T, mentions=[OWNER]))
    other = json.dumps(post_event("did:plc:alice", "3k2", f"about {OWNER}", T + 1))
    assert PostFilter(WATCH).read(own).post is None
    assert PostFilter(WATCH).read(other).post is None
