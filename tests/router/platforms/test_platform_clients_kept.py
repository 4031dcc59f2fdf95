"""One platform client per platform per lane thread, on every platform, as a router runs it:

- consecutive posts reuse the client: the platform accepts no new TCP connection after the
  first post, one login (Bluesky's session, Reddit's token), Mastodon's instance limit looked up once;
- a connection the platform dropped mid-answer makes the next post build a fresh client (and a
  fresh connection), which works;
- new credentials make a new client;
- a stopping router closes every kept client: the platform sees its connections closed.
"""

from __future__ import annotations

import time

import pytest

from protocol.keys import AGENT_LOGIN
from router.registry import discover_skills
from tests.router.platforms.test_flaky_platforms import PLATFORMS, Platform
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

SKILLS = discover_skills()


def post_params(p: Platform, text: str) -> dict[str, str]:
    extra = {"subreddit": "test"} if p.name == "reddit" else {}
    return {"platform": p.name, "text": text, **extra}


def settings(p: Platform, redis_urls, tmp_path):
    return settings_for(redis_urls.router_url, tmp_path, ROUTER_QUOTAS=f"{p.name}:post=100",
                        ROUTER_PACING=f"{p.name}:post=0", ROUTER_PLATFORM_CONCURRENCY="1", **p.env)


def post(admin, keys, p: Platform, text: str) -> dict:
    return reply_of(admin, keys, push(admin, keys, "CREATE_POST", post_params(p, text)))


def wait_closed(p: Platform, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while (still_open := p.fake.connections()[1]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return still_open


@pytest.fixture(params=sorted(PLATFORMS))
def platform(request):
    made = PLATFORMS[request.param]()
    yield made
    made.fake.stop()


def test_consecutive_posts_reuse_one_connection_and_close_at_shutdown(platform, redis_urls, admin, tmp_path):
    p, keys = platform, redis_urls.keys
    with WorkerThread(settings(p, redis_urls, tmp_path), SKILLS, p.credentials):
        first = post(admin, keys, p, "kept client apple orchard")
        after_first = p.fake.connections()[0]
        requests_after_first = len(p.fake.requests)
        rest = [post(admin, keys, p, f"kept client {w} number {n}") for n, w in enumerate(("river", "stone"))]
        accepted, still_open = p.fake.connections()
    assert [r["status"] for r in (first, *rest)] == ["ok"] * 3, (first, rest)
    # Reddit's token request asks for its connection to be closed (prawcore's choice): one more.
    assert after_first == (2 if p.name == "reddit" else 1), after_first
    assert accepted == after_first, f"{p.name}: the later posts opened {accepted - after_first} connections"
    assert still_open == 1
    per_post = (len(p.fake.requests) - requests_after_first) / 2
    assert per_post <= requests_after_first, "the later posts log in or look up again"
    if p.name == "bsky":
        assert p.fake.paths("POST").count("/xrpc/com.atproto.server.createSession") == 1
    if p.name == "reddit":
        assert p.fake.paths("POST").count("/api/v1/access_token") == 1
    if p.name == "mastodon":
        assert [path for path in p.fake.paths("GET") if "instance" in path] == ["/api/v2/instance/"]
    assert wait_closed(p) == 0, f"{p.name}: the stopped router left its connection open"


def test_a_dropped_connection_makes_a_fresh_client(platform, redis_urls, admin, tmp_path):
    p, keys = platform, redis_urls.keys
    with WorkerThread(settings(p, redis_urls, tmp_path), SKILLS, p.credentials):
        assert post(admin, keys, p, "before the reset, first of all")["status"] == "ok"
        first = p.fake.connections()[0]
        p.fake.break_writes = "reset"
        broken = post(admin, keys, p, "the answer to this one is lost")
        p.fake.break_writes = None
        after = post(admin, keys, p, "after the reset, a new connection")
        accepted = p.fake.connections()[0]
    # Bluesky looks the record up by its key and finds the post made: ok, already posted.
    found = broken["status"] == "ok" and broken["result"].get("already_posted")
    assert broken["status"] == "unknown" or found, broken
    assert after["status"] == "ok", after
    assert accepted == 2 * first, f"{p.name}: {accepted} connections (the dropped ones, then as many fresh)"


def test_new_credentials_make_a_new_client(redis_urls, admin, tmp_path):
    p, keys = PLATFORMS["moltbook"](), redis_urls.keys
    try:
        with WorkerThread(settings(p, redis_urls, tmp_path), SKILLS, p.credentials) as worker:
            assert post(admin, keys, p, "with the first key, all good")["status"] == "ok"
            worker.taker(AGENT_LOGIN).runner.credentials["MOLTBOOK_API_KEY"] = "moltbook_sk_" + "anotherKey12"  # type: ignore[index]
            refused = post(admin, keys, p, "with the second key, refused")
            worker.taker(AGENT_LOGIN).runner.credentials.update(p.credentials)  # type: ignore[attr-defined]
            again = post(admin, keys, p, "with the first key once more")
        sent = [r.headers["authorization"] for r in p.fake.requests if r.method == "POST"]
    finally:
        p.fake.stop()
    assert refused["status"] == "error" and refused["error"] == "auth_failed", refused
    assert again["status"] == "ok", again
    assert sent == [f"Bearer {p.credentials['MOLTBOOK_API_KEY']}", "Bearer moltbook_sk_anotherKey12",
                    f"Bearer {p.credentials['MOLTBOOK_API_KEY']}"]


def test_bluesky_reads_keep_one_appview_connection(redis_urls, admin, tmp_path):
    p, keys = PLATFORMS["bsky"](), redis_urls.keys
    try:
        with WorkerThread(settings(p, redis_urls, tmp_path), SKILLS, {}):
            replies = [reply_of(admin, keys, push(admin, keys, "SEARCH_POSTS", {"query": f"their {n}"}))
                       for n in range(3)]
            replies.append(reply_of(admin, keys, push(admin, keys, "FETCH_POST", {"post_id": p.other})))
            accepted = p.fake.connections()[0]
        still_open = wait_closed(p)
    finally:
        p.fake.stop()
    assert [r["status"] for r in replies] == ["ok"] * 4, replies
    assert accepted == 1, f"{accepted} connections for 4 reads"
    assert still_open == 0


@pytest.mark.parametrize("name, login_path", [("bsky", "/xrpc/com.atproto.server.createSession"),
                                               ("reddit", "/api/v1/access_token")])
def test_auth_test_logs_in_afresh_each_time_after_posts(name, login_path, redis_urls, admin, tmp_path):
    """A kept session may outlive its credentials: AUTH_TEST never answers from it."""
    p, keys = PLATFORMS[name](), redis_urls.keys
    try:
        with WorkerThread(settings(p, redis_urls, tmp_path), SKILLS, p.credentials):
            assert post(admin, keys, p, "a post that leaves a kept session")["status"] == "ok"
            checks = [reply_of(admin, keys, push(admin, keys, "AUTH_TEST", {"platform": name})) for _ in range(2)]
            assert post(admin, keys, p, "a post after the checks, on their session")["status"] == "ok"
        logins = p.fake.paths("POST").count(login_path)
    finally:
        p.fake.stop()
    assert [r["status"] for r in checks] == ["ok", "ok"], checks
    assert logins == 3, f"{name}: {logins} logins for one post and two checks"


def test_the_one_shot_tool_closes_its_client_when_its_command_is_done(tmp_path):
    from protocol.commands import CommandEnvelope
    from protocol.origin import OWNER, Origin
    from router.redaction import Redactor
    from router.social.oneshot import OneShotRouter

    p = PLATFORMS["moltbook"]()
    try:
        env = {"ROUTER_DATA_DIR": str(tmp_path), "ROUTER_PACING": "moltbook:post=0", **p.env, **p.credentials}
        router = OneShotRouter(env, Redactor(list(p.credentials.values())), SKILLS)
        envelope = CommandEnvelope.new("CREATE_POST", post_params(p, "one shot, one client"), "t", ttl_seconds=60,
                                       origin=Origin(OWNER, "console"))
        reply = router.run(envelope)
        accepted, still_open = p.fake.connections()[0], wait_closed(p)
    finally:
        p.fake.stop()
    assert reply.status == "ok", reply
    assert accepted == 1 and still_open == 0
