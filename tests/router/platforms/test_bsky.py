"""BlueskyClient through the real `atproto` SDK against the fake PDS/AppView."""

import logging
import traceback

import pytest
import regex

from router.errors import SkillError
from router.platforms import bsky_appview
from router.platforms.base import PostRequest
from router.platforms.bsky import BlueskyClient, record_key_for, split_post_ref
from router.platforms.bsky_thread import fetch_thread
from tests.support.fake_bsky import TID_RE, FakeBluesky

SECRET = "app-pass-SECRET-4242"
FAMILY = "👨‍👩‍👧‍👦"


@pytest.fixture
def fake():
    server = FakeBluesky(password=SECRET).start()
    yield server
    server.stop()


def make_client(fake, password=SECRET, timeout=5.0):
    env = {"BSKY_SERVICE": fake.url, "BSKY_APPVIEW": fake.url}
    return BlueskyClient({"BSKY_HANDLE": fake.handle, "BSKY_PASSWORD": password}, env, timeout)


def rkey_of(uri):
    return uri.rsplit("/", 1)[-1]


def test_missing_credentials_is_no_credentials():
    with pytest.raises(SkillError) as caught:
        BlueskyClient({"BSKY_HANDLE": "me.test"}, {})
    assert caught.value.kind == "no_credentials" and "BSKY_PASSWORD" in caught.value.message


def test_auth_test_logs_in_with_jwt_session(fake):
    assert make_client(fake).auth_test() == {"platform": "bsky", "handle": fake.handle, "id": fake.did}
    assert fake.requests[0].json() == {"identifier": fake.handle, "password": SECRET}


def test_plain_post_uses_a_tid_record_key_from_the_command_id(fake):
    ref = make_client(fake).post(PostRequest(text="hello world", idempotency_key="cmd-1"))
    write = fake.writes()[-1]
    assert write["rkey"] == record_key_for("cmd-1") and TID_RE.match(write["rkey"])
    assert write["record"]["text"] == "hello world"
    assert ref.id == f"at://{fake.did}/app.bsky.feed.post/{write['rkey']}"
    assert ref.url == f"https://bsky.app/profile/{fake.handle}/post/{write['rkey']}"
    assert "truncated" not in ref.to_dict()


def test_record_keys_are_deterministic_and_distinct():
    assert record_key_for("a") == record_key_for("a") != record_key_for("b")
    assert all(TID_RE.match(record_key_for(str(n))) for n in range(200))


def test_retried_post_is_harmless(fake):
    client = make_client(fake)
    first = client.post(PostRequest(text="once", idempotency_key="cmd-retry"))
    second = make_client(fake).post(PostRequest(text="once", idempotency_key="cmd-retry"))
    assert second.id == first.id and second.extra == {"already_posted": True}
    assert sum(1 for uri in fake.records if uri.startswith(f"at://{fake.did}/app.bsky.feed.post/")) == 1


def test_reply_to_a_reply_threads_to_the_root(fake):
    alice = fake.add_account("alice.test", "Alice")
    root = fake.add_post(alice, "root")
    middle = fake.add_post(
        alice, "middle", reply={"root": fake.strong_ref(root), "parent": fake.strong_ref(root)}
    )
    web_url = f"https://bsky.app/profile/alice.test/post/{rkey_of(middle)}"
    make_client(fake).post(PostRequest(text="my reply", reply_to=web_url, idempotency_key="r1"))
    reply = fake.writes()[-1]["record"]["reply"]
    assert reply["root"]["uri"] == root and reply["root"]["cid"] == fake.records[root]["cid"]
    assert reply["parent"]["uri"] == middle and reply["parent"]["cid"] == fake.records[middle]["cid"]


def test_reply_to_a_top_level_post_uses_it_as_root_and_parent(fake):
    alice = fake.add_account("alice.test")
    root = fake.add_post(alice, "root")
    make_client(fake).post(PostRequest(text="hi", reply_to=root, idempotency_key="r2"))
    reply = fake.writes()[-1]["record"]["reply"]
    assert reply["root"]["uri"] == reply["parent"]["uri"] == root


def test_reply_to_a_missing_post_is_not_found(fake):
    with pytest.raises(SkillError) as caught:
        make_client(fake).post(
            PostRequest(text="hi", reply_to=f"at://{fake.did}/app.bsky.feed.post/3l2222222222z")
        )
    assert caught.value.kind == "not_found"
    assert fake.writes() == []


def test_quote_becomes_a_record_embed(fake):
    alice = fake.add_account("alice.test")
    quoted = fake.add_post(alice, "quote me")
    make_client(fake).post(PostRequest(text="look", quote=quoted, idempotency_key="q1"))
    embed = fake.writes()[-1]["record"]["embed"]
    assert embed["$type"] == "app.bsky.embed.record"
    assert {k: embed["record"][k] for k in ("uri", "cid")} == fake.strong_ref(quoted)


def test_link_and_mention_become_facets_with_utf8_byte_offsets(fake):
    alice = fake.add_account("alice.test")
    text = f"{FAMILY} café @alice.test"
    make_client(fake).post(PostRequest(text=text, url="https://example.com/page", idempotency_key="f1"))
    record = fake.writes()[-1]["record"]
    assert record["text"] == text + " https://example.com/page"
    encoded = record["text"].encode()
    by_kind = {f["features"][0]["$type"].split("#")[1]: f for f in record["facets"]}
    link, mention = by_kind["link"], by_kind["mention"]
    assert encoded[link["index"]["byteStart"] : link["index"]["byteEnd"]] == b"https://example.com/page"
    assert link["features"][0]["uri"] == "https://example.com/page"
    assert encoded[mention["index"]["byteStart"] : mention["index"]["byteEnd"]] == b"@alice.test"
    assert mention["features"][0]["did"] == alice


def test_long_text_is_cut_to_300_graphemes_on_a_cluster_boundary(fake):
    text = "a" * 290 + FAMILY * 20
    ref = make_client(fake).post(PostRequest(text=text, idempotency_key="long"))
    posted = fake.writes()[-1]["record"]["text"]
    assert ref.extra["truncated"] is True
    assert len(regex.findall(r"\X", posted)) == 300
    assert posted == "a" * 290 + FAMILY * 9 + "…"


def test_long_text_with_link_keeps_the_link_whole(fake):
    url = "https://example.com/" + "p" * 40
    make_client(fake).post(PostRequest(text="w " * 400, url=url, idempotency_key="long-link"))
    record = fake.writes()[-1]["record"]
    assert len(regex.findall(r"\X", record["text"])) <= 300 and record["text"].endswith(" " + url)
    link = record["facets"][0]
    assert record["text"].encode()[link["index"]["byteStart"] : link["index"]["byteEnd"]] == url.encode()


def test_emoji_text_is_also_cut_to_the_3000_utf8_bytes_a_post_may_hold(fake):
    # 250 family emoji are 250 graphemes (under 300) but 6250 bytes: the PDS refuses that.
    ref = make_client(fake).post(PostRequest(text=FAMILY * 250, idempotency_key="bytes"))
    posted = fake.writes()[-1]["record"]["text"]
    assert ref.extra["truncated"] is True and len(posted.encode()) <= 3000
    assert posted == FAMILY * ((3000 - len("…".encode())) // len(FAMILY.encode())) + "…"


def test_emoji_text_with_link_fits_the_byte_limit_with_the_link_whole(fake):
    url = "https://example.com/x"
    make_client(fake).post(PostRequest(text=FAMILY * 250, url=url, idempotency_key="bytes-link"))
    posted = fake.writes()[-1]["record"]["text"]
    assert len(posted.encode()) <= 3000 and posted.endswith("… " + url)


def test_delete_like_profile_metrics(fake):
    client = make_client(fake)
    alice = fake.add_account("alice.test")
    theirs = fake.add_post(alice, "like me")
    ref = client.post(PostRequest(text="mine", idempotency_key="m1"))
    assert client.like(theirs)["liked"] is True
    assert fake.records[theirs]["likes"] == 1
    metrics = client.metrics(theirs)
    assert metrics["likes"] == 1 and metrics["reposts"] == 2 and metrics["replies"] == 0
    profile = client.profile()
    assert (
        profile["handle"] == fake.handle and profile["display_name"] == "SafeClaw" and profile["posts"] == 1
    )
    assert client.delete(ref.url) == {"deleted": True, "id": ref.id}
    assert ref.id not in fake.records
    with pytest.raises(SkillError) as caught:
        client.delete(theirs)
    assert caught.value.kind == "invalid_params"


def test_notifications_are_normalised(fake):
    client = make_client(fake)
    own = client.post(PostRequest(text="mine", idempotency_key="n1"))
    alice = fake.add_account("alice.test", "Alice")
    fake.add_notification("mention", alice, "hello @safeclaw.test")
    fake.add_notification("like", alice, subject=own.id)
    fake.add_notification("follow", alice)
    mention, like, follow = client.notifications(10)
    assert (mention.kind, mention.author, mention.text) == ("mention", "alice.test", "hello @safeclaw.test")
    assert mention.url.startswith("https://bsky.app/profile/alice.test/post/")
    assert (like.kind, like.post_id, like.text) == ("like", own.id, "")
    assert (follow.kind, follow.post_id) == ("follow", None)
    assert fake.requests[-1].query["limit"] == ["10"]


def test_public_reads_need_no_credentials(fake):
    alice = fake.add_account("alice.test", "Alice")
    root = fake.add_post(alice, "a post about otters")
    fake.add_post(
        alice, "reply on otters", reply={"root": fake.strong_ref(root), "parent": fake.strong_ref(root)}
    )
    env = {"BSKY_APPVIEW": fake.url}
    found = bsky_appview.search_posts(env, "otters", 5, 5.0)
    assert {p["text"] for p in found} == {"a post about otters", "reply on otters"}
    post = fetch_thread(env, f"https://bsky.app/profile/alice.test/post/{rkey_of(root)}", 5.0)
    assert post["id"] == root and post["author"] == "alice.test" and post["replies"] == 1
    assert [r["text"] for r in post["thread_replies"]] == ["reply on otters"]
    assert not any("authorization" in r.headers for r in fake.requests)
    assert "/xrpc/com.atproto.identity.resolveHandle" in fake.paths()


def test_post_refs_are_parsed_or_refused():
    assert split_post_ref("https://bsky.app/profile/did:plc:abc/post/3l2222") == ("did:plc:abc", "3l2222")
    with pytest.raises(SkillError) as caught:
        split_post_ref("https://example.com/not-a-post")
    assert caught.value.kind == "invalid_params"


def assert_secret_nowhere(error, caplog, capfd):
    out, err = capfd.readouterr()
    rendered = [
        error.message,
        str(error),
        repr(error),
        "".join(traceback.format_exception(error)),
        caplog.text,
        out,
        err,
    ]
    assert all(SECRET not in text for text in rendered)


def test_auth_failure_never_reveals_the_echoed_password(fake, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    fake.fail_mode = "auth"
    with pytest.raises(SkillError) as caught:
        make_client(fake).auth_test()
    assert caught.value.kind == "auth_failed"
    assert SECRET.encode() in fake.requests[0].body  # the fake did echo what it was sent
    assert_secret_nowhere(caught.value, caplog, capfd)


def test_wrong_password_is_auth_failed_without_the_password(fake, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(SkillError) as caught:
        make_client(fake, password=SECRET + "-wrong").post(PostRequest(text="x"))
    assert caught.value.kind == "auth_failed"
    assert_secret_nowhere(caught.value, caplog, capfd)


def test_rate_limit_carries_retry_after(fake):
    client = make_client(fake)
    client.auth_test()
    fake.fail_mode, fake.fail_paths = "rate", {"/xrpc/com.atproto.repo.createRecord"}
    with pytest.raises(SkillError) as caught:
        client.post(PostRequest(text="x", idempotency_key="rl"))
    assert caught.value.kind == "rate_limited" and caught.value.retry_after == 7.0


def test_server_error_is_request_failed(fake):
    fake.fail_mode = "error"
    with pytest.raises(SkillError) as caught:
        make_client(fake).post(PostRequest(text="x", idempotency_key="e"))
    assert caught.value.kind == "request_failed"


def test_timeout_is_request_failed(fake):
    fake.fail_mode, fake.delay = "slow", 5.0
    with pytest.raises(SkillError) as caught:
        make_client(fake, timeout=0.3).auth_test()
    assert caught.value.kind == "request_failed" and "in time" in caught.value.message
