"""A planted fake secret never appears in a reply, a log line, stderr or any Redis key or value,
even when a skill echoes it in its result, its error, its crash, or its own log lines."""

import base64
import logging
from urllib.parse import quote

from router.config.credentials import load_credentials, secret_values
from router.errors import SkillError
from router.logs import setup_logging
from router.redaction import Redactor
from router.registry import Skill
from tests.router.router_helpers import (
    MY_SKILLS,
    RouterProcess,
    WorkerThread,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)

PLANTED = "planted-secret-7f3a9c1e2b"
FORMS = [PLANTED, quote(PLANTED, safe=""), base64.b64encode(PLANTED.encode()).decode().rstrip("=")]


def leak(params, ctx):
    secret = ctx.credentials["BSKY_PASSWORD"]
    ctx.log.warning("about to leak %s", secret)
    if params["how"] == "error":
        raise SkillError("auth_failed", f"server said: wrong password {secret}")
    if params["how"] == "crash":
        raise RuntimeError(f"boom {secret} {base64.b64encode(secret.encode()).decode()}")
    return {"echo": secret, "url": f"https://x/?p={quote(secret, safe='')}", secret: "as a key"}


LEAK = Skill("LEAK", "echoes the secret", {"type": "object", "properties": {"how": {"type": "string"}},
                                           "required": ["how"]}, False, leak)


def everything_in_redis(admin):
    dump = []
    for key in admin.scan_iter("*"):
        dump.append(key)
        kind = admin.type(key)
        if kind == "string":
            dump.append(admin.get(key))
        elif kind == "list":
            dump.extend(admin.lrange(key, 0, -1))
    return "\n".join(dump)


def assert_clean(text, where):
    for form in FORMS:
        assert form not in text, f"secret found in {where}"


def test_secret_echoed_by_a_skill_never_leaves(redis_urls, admin, tmp_path, capfd):
    keys = redis_urls.keys
    settings = settings_for(redis_urls.router_url, tmp_path, BSKY_HANDLE="me.example", BSKY_PASSWORD=PLANTED,
                            ROUTER_MAX_ATTEMPTS="2")
    credentials = load_credentials(settings.env)
    redactor = Redactor(secret_values(settings.env, credentials))
    handlers = setup_logging(tmp_path / "router.log", "INFO", redactor)
    try:
        with WorkerThread(settings, {**MY_SKILLS, "LEAK": LEAK}, credentials):
            replies = [reply_of(admin, keys, push(admin, keys, "LEAK", {"how": how}))
                       for how in ("result", "error", "crash")]
            # An action named like the secret is echoed in the "unknown action" message.
            replies.append(reply_of(admin, keys, push(admin, keys, PLANTED, {})))
            replies.append(reply_of(admin, keys, push(admin, keys, "NOTE", {"text": 1, PLANTED: 2})))
            assert admin.llen(keys.dead_letter) == 1
            redis_dump = everything_in_redis(admin)
    finally:
        for handler in handlers:
            logging.getLogger().removeHandler(handler)
            handler.close()
    assert [r["status"] for r in replies] == ["ok", "error", "error", "denied", "denied"]
    assert replies[0]["result"]["echo"] == "[REDACTED]"
    assert_clean(str(replies), "a reply")
    assert_clean(redis_dump, "Redis")
    log_text = (tmp_path / "router.log").read_text()
    assert "about to leak [REDACTED]" in log_text and "RuntimeError" in log_text  # the logs did run
    assert_clean(log_text, "the log file")
    assert_clean(capfd.readouterr().err, "stderr")


def test_router_process_never_emits_planted_secret(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    env = router_env(redis_urls.router_url, tmp_path, BSKY_HANDLE="me.example", BSKY_PASSWORD=PLANTED,
                     ROUTER_LOG_LEVEL="DEBUG")
    process = RouterProcess(env)
    try:
        wait_until(lambda: admin.exists(keys.router_heartbeat("r1")), "the router to start")
        replies = [reply_of(admin, keys, push(admin, keys, PLANTED, {"x": PLANTED})),
                   reply_of(admin, keys, push(admin, keys, "PING", {PLANTED: 1}))]
        admin.lpush(keys.command_queue, f'{{"id": "{PLANTED}", "broken": ')  # malformed, dead-lettered
        wait_until(lambda: admin.llen(keys.dead_letter) == 1, "the dead letter")
        heartbeat = admin.get(keys.router_heartbeat("r1"))
        redis_dump = everything_in_redis(admin)
    finally:
        process.stop()
    assert [r["status"] for r in replies] == ["denied", "denied"]
    assert '"bsky"' in heartbeat  # the credentials were loaded
    assert_clean(str(replies), "a reply")
    assert_clean(redis_dump, "Redis")
    assert_clean((tmp_path / "r1.log").read_text(), "the log file")
    assert_clean(process.log_path.read_text(), "stderr")


def test_a_secret_cut_in_half_by_a_message_limit_is_still_redacted(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    settings = settings_for(redis_urls.router_url, tmp_path, BSKY_HANDLE="me.example", BSKY_PASSWORD=PLANTED)
    credentials = load_credentials(settings.env)
    thread = WorkerThread(settings, dict(MY_SKILLS), credentials)
    prefix = "the command was set aside for the router's operator (dead-letter): router error: RuntimeError: "

    def broken_check(effect, envelope, conn, now):  # a router bug whose message carries a secret near the cut
        raise RuntimeError("x" * (290 - len(prefix)) + PLANTED)

    thread.worker.policy.checks.insert(0, broken_check)
    with thread:
        reply = reply_of(admin, keys, push(admin, keys, "PING", {}))
        redis_dump = everything_in_redis(admin)
    assert reply["status"] == "error" and reply["error"] == "internal_error"
    assert PLANTED[:10] not in str(reply) and PLANTED[:10] not in redis_dump


def test_an_unexpected_error_ends_the_router_without_a_raw_traceback(redis_urls, tmp_path, monkeypatch, capfd):
    from router import start_router
    from router.queue.worker import Worker

    secret = "planted-crash-secret-0123456789"
    env = router_env(redis_urls.router_url, tmp_path, BSKY_HANDLE="me.test", BSKY_PASSWORD=secret)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    def explode(self):
        raise RuntimeError(f"redis said something odd about {secret}")

    monkeypatch.setattr(Worker, "run", explode)
    assert start_router.main(["--env-file", str(tmp_path / "none.env")]) == 1
    out, err = capfd.readouterr()
    log_text = (tmp_path / "r1.log").read_text()
    assert "unexpected error" in log_text and "RuntimeError" in log_text
    assert secret not in out + err + log_text
    logging.getLogger().handlers.clear()
