"""Unknown when an action may have happened; one intent acts at most once.

A platform that does the post and then answers 200 with an unreadable body must come back
`unknown` (not `error`, which invites a retry), and a second command with the same intent key
is answered from the first one's record without a second post.
"""

import pytest

from protocol.commands import CommandEnvelope, intent_key
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN, WorkerThread, reply_of, settings_for
from tests.support.fake_mastodon import FakeMastodon
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.fake_x import ME_ID, FakeX

SKILLS = discover_skills()
X_CREDS = {"X_API_KEY": "ck-outcome-1", "X_API_SECRET": "cs-outcome-2",
           "X_ACCESS_TOKEN": f"{ME_ID}-at-outcome-3", "X_ACCESS_SECRET": "as-outcome-4"}


def moltbook():
    fake = FakeMoltbook(api_key="moltbook_sk_" + "outcomeKey123").start()
    return fake, {"MOLTBOOK_API_KEY": fake.api_key}, {"MOLTBOOK_API_BASE": fake.base}, "/api/v1/posts", (
        lambda: len(fake.posts))


def x():
    fake = FakeX(**{k.lower().removeprefix("x_"): v for k, v in X_CREDS.items()}).start()
    return fake, dict(X_CREDS), {"X_API_BASE": fake.url}, "/2/tweets", lambda: len(fake.tweets)


def mastodon():
    fake = FakeMastodon(token="mastodon-" + "outcome-token-5").start()
    creds = {"MASTODON_TOKEN": fake.token, "MASTODON_INSTANCE": fake.url}
    return fake, creds, {}, "/api/v1/statuses", lambda: len(fake.statuses)


PLATFORMS = {"moltbook": moltbook, "x": x, "mastodon": mastodon}


@pytest.fixture(params=sorted(PLATFORMS))
def platform(request):
    fake, creds, env, path, count = PLATFORMS[request.param]()
    yield request.param, fake, creds, env, path, count
    fake.stop()


def send(admin, keys, action, params, intent=""):
    envelope = CommandEnvelope.new(action, params, "t", ttl_seconds=60, intent=intent, origin=OWNER_TURN)
    admin.lpush(keys.command_queue, envelope.to_json())
    return reply_of(admin, keys, envelope.id)


def post_params(name):
    params = {"platform": name, "text": "one post, whatever happens"}
    if name == "moltbook":
        params |= {"title": "t"}
    return params


def test_a_post_made_but_answered_unreadably_is_unknown_and_its_repeat_is_not_made(
        redis_urls, admin, tmp_path, platform):
    name, fake, creds, env, path, count = platform
    fake.fail_mode, fake.garble_paths = "garbled", {path}
    intent = intent_key("turn-1", "CREATE_POST", post_params(name))
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, **env), dict(SKILLS), creds):
        first = send(admin, redis_urls.keys, "CREATE_POST", post_params(name), intent)
        fake.fail_mode = None
        again = send(admin, redis_urls.keys, "CREATE_POST", post_params(name), intent)
    assert first["status"] == "unknown", first
    assert again["status"] == "unknown" and again["repeat_of"] == first["id"]
    assert count() == 1  # made once, never twice


def test_a_repeat_of_a_done_intent_gets_the_first_answer(redis_urls, admin, tmp_path, platform):
    name, fake, creds, env, path, count = platform
    intent = intent_key("turn-2", "CREATE_POST", post_params(name))
    other = {**post_params(name), "text": "a second post, in other words entirely"}
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_PACING="moltbook:post=0", **env)
    with WorkerThread(settings, dict(SKILLS), creds):
        first = send(admin, redis_urls.keys, "CREATE_POST", post_params(name), intent)
        again = send(admin, redis_urls.keys, "CREATE_POST", post_params(name), intent)
        same_words = send(admin, redis_urls.keys, "CREATE_POST", post_params(name),
                          intent_key("turn-3", "CREATE_POST", post_params(name)))
        other_turn = send(admin, redis_urls.keys, "CREATE_POST", other, intent_key("turn-3", "CREATE_POST", other))
    assert first["status"] == "ok" and again["result"] == first["result"] and again["repeat_of"] == first["id"]
    assert (same_words["status"], same_words["error"]) == ("denied", "duplicate_content")  # a new intent
    assert other_turn["status"] == "ok" and count() == 2


def test_a_failure_known_to_be_before_the_send_is_error_and_may_be_repeated(
        redis_urls, admin, tmp_path, platform):
    name, fake, creds, env, path, count = platform
    fake.fail_mode = "auth"
    intent = intent_key("turn-4", "CREATE_POST", post_params(name))
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path, **env), dict(SKILLS), creds):
        first = send(admin, redis_urls.keys, "CREATE_POST", post_params(name), intent)
        fake.fail_mode = None
        again = send(admin, redis_urls.keys, "CREATE_POST", post_params(name), intent)
    assert (first["status"], first["error"]) == ("error", "auth_failed")
    assert again["status"] == "ok" and "repeat_of" not in again and count() == 1


@pytest.mark.parametrize("bad", ["a b", "x" * 129, "é", 5])
def test_a_malformed_intent_is_a_malformed_command(bad):
    from protocol.wire import ProtocolError

    envelope = CommandEnvelope.new("PING", {}, "t", ttl_seconds=5)
    raw = envelope.to_json().replace('"intent": ""', f'"intent": {bad!r}'.replace("'", '"'))
    with pytest.raises(ProtocolError, match="intent"):
        CommandEnvelope.from_json(raw)
