"""FETCH_POST's read of a post in context (parents, quote, alt texts, link) and why a post is unreadable."""

import pytest

from router.errors import SkillError
from router.platforms import bsky_appview
from router.platforms.bsky_thread import fetch_thread
from tests.support.fake_bsky import FakeBluesky


@pytest.fixture
def fake():
    server = FakeBluesky().start()
    yield server
    server.stop()


def url_of(fake, uri):
    return f"https://bsky.app/profile/{fake.handle_of(uri.split('/')[2])}/post/{uri.rsplit('/', 1)[1]}"


def test_the_thread_above_comes_root_first_with_the_quote_alt_texts_and_link(fake):
    alice = fake.add_account("alice.test", "Alice")
    bob = fake.add_account("bob.test", "Bob")
    quoted = fake.add_post(
        bob, "the original hot take", embed=fake.link("https://ex.test/a", "A paper", "about B")
    )
    root = fake.add_post(alice, "root of the thread")
    middle = fake.add_post(bob, "middle reply", reply=fake.reply_to(root))
    post = fake.add_post(
        alice,
        "this!",
        reply=fake.reply_to(middle),
        embed=fake.quote(quoted, media=fake.images("a chart of rising prices", "a cat")),
    )
    env = {"BSKY_APPVIEW": fake.url}
    got = fetch_thread(env, url_of(fake, post), 5.0)
    assert got["text"] == "this!"
    assert [p["text"] for p in got["parents"]] == ["root of the thread", "middle reply"]
    assert [i["alt"] for i in got["images"]] == ["a chart of rising prices", "a cat"]
    assert got["quoted"]["text"] == "the original hot take" and got["quoted"]["author"] == "bob.test"
    assert got["quoted"]["link"]["title"] == "A paper"
    thread_call = next(r for r in fake.requests if r.path.endswith("getPostThread"))
    assert thread_call.query["parentHeight"] == ["5"]


def test_a_did_url_and_an_at_uri_reach_the_same_post(fake):
    alice = fake.add_account("alice.test")
    post = fake.add_post(alice, "hello", embed=fake.link("https://ex.test", "Example"))
    env = {"BSKY_APPVIEW": fake.url}
    by_did = fetch_thread(env, f"https://bsky.app/profile/{alice}/post/{post.rsplit('/', 1)[1]}", 5.0)
    assert by_did["id"] == fetch_thread(env, post, 5.0)["id"] == post
    assert by_did["link"]["url"] == "https://ex.test"


def test_a_deleted_parent_or_quote_is_said_not_hidden(fake):
    alice = fake.add_account("alice.test")
    gone = fake.add_post(alice, "soon deleted")
    post = fake.add_post(alice, "answering", reply=fake.reply_to(gone), embed=fake.quote(gone))
    fake.delete_post(gone)
    got = fetch_thread({"BSKY_APPVIEW": fake.url}, post, 5.0)
    assert got["parents"] == [{"id": gone, "unavailable": "this post in the thread is deleted"}]
    assert got["quoted"] == {"id": gone, "unavailable": "the quoted post was deleted"}


def kind_of(env, ref):
    with pytest.raises(SkillError) as caught:
        fetch_thread(env, ref, 5.0)
    return caught.value.kind, caught.value.message


def test_no_such_account_or_post_is_not_found(fake):
    env = {"BSKY_APPVIEW": fake.url}
    kind, message = kind_of(env, "https://bsky.app/profile/nobody.test/post/3l22222222222")
    assert kind == "not_found" and "nobody.test" in message
    kind, _ = kind_of(env, "at://did:plc:unknownunknownunknown00/app.bsky.feed.post/3l22222222222")
    assert kind == "not_found"


def test_a_deleted_post_of_a_living_account_is_deleted(fake):
    alice = fake.add_account("alice.test")
    post = fake.add_post(alice, "regrettable")
    fake.delete_post(post)
    kind, message = kind_of({"BSKY_APPVIEW": fake.url}, url_of(fake, post))
    assert kind == "deleted" and "deleted" in message


def test_an_author_who_hides_from_logged_out_viewers_is_respected(fake):
    shy = fake.add_account("shy.test")
    alice = fake.add_account("alice.test")
    hidden = fake.add_post(shy, "only for logged-in people")
    fake.hide_from_logged_out(shy)
    env = {"BSKY_APPVIEW": fake.url}
    kind, message = kind_of(env, url_of(fake, hidden))
    assert kind == "login_required" and "logged-out" in message
    quoting = fake.add_post(alice, "look at this", reply=fake.reply_to(hidden), embed=fake.quote(hidden))
    got = fetch_thread(env, quoting, 5.0)
    assert "only for logged-in" not in str(got)
    assert got["quoted"]["unavailable"] and got["parents"][0]["unavailable"]
    assert bsky_appview.search_posts(env, "logged-in", 5, 5.0) == []


def test_a_down_appview_is_request_failed(fake):
    alice = fake.add_account("alice.test")
    post = fake.add_post(alice, "x")
    fake.fail_mode = "error"
    kind, _ = kind_of({"BSKY_APPVIEW": fake.url}, post)
    assert kind == "request_failed"
