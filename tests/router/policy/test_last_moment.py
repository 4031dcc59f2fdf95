"""The last moment decides: the owner turns the kill switch on while a write's slow step is under
way (a login, a token exchange, the instance's facts, the lookup of the post it acts on); the write
never reaches the platform and the reply says the kill switch stopped it. A real router (the
worker against the real redis-server, its ACL users), the official SDKs against the fakes, the
switch flipped by the control login as the dashboard does it; the one-shot tool, with REDIS_URL,
reads the same key at the same moment."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis

from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.errors import SkillError
from router.pipeline import Pipeline, Planned
from router.policy import kill_switch
from router.policy.effects import Effect
from router.policy.last_moment import kill_switch_check
from router.registry import discover_skills
from router.social.cli import run_command
from tests.router.platform_cases import ACCOUNTS, Account
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for
from tests.support.redis_server import free_port


@dataclass(frozen=True)
class Case:
    platform: str
    action: str
    params: Callable[[Account], dict[str, Any]]
    slow: Callable[[Account], tuple[str, str]]  # (method, path) of the step before the write

    @property
    def id(self) -> str:
        return f"{self.platform}-{self.action.lower()}"


def post(account: Account) -> dict[str, Any]:
    extra = {"subreddit": "test"} if account.platform == "reddit" else {}
    return {"platform": account.platform, "text": "posted after the switch went on?", **extra}


def delete_own(account: Account) -> dict[str, Any]:
    return {"platform": account.platform, "post_id": account.own}


CASES = [
    Case("bsky", "CREATE_POST", post, lambda a: ("POST", "/xrpc/com.atproto.server.createSession")),
    Case("bsky", "LIKE_POST", lambda a: {"platform": "bsky", "post_id": a.other},
         lambda a: ("GET", "/xrpc/com.atproto.repo.getRecord")),
    Case("mastodon", "CREATE_POST", post, lambda a: ("GET", "/api/v2/instance/")),
    Case("mastodon", "DELETE_POST", delete_own, lambda a: ("GET", f"/api/v1/statuses/{a.own}")),
    Case("reddit", "CREATE_POST", post, lambda a: ("POST", "/api/v1/access_token")),
    Case("reddit", "DELETE_POST", delete_own, lambda a: ("GET", "/api/info/")),
    Case("x", "CREATE_POST", post, lambda a: ("GET", "/2/users/me")),
    Case("x", "DELETE_POST", delete_own, lambda a: ("GET", f"/2/tweets/{a.own}")),
    Case("moltbook", "DELETE_POST", delete_own, lambda a: ("GET", f"/api/v1/posts/{a.own}")),
]


@pytest.fixture(params=CASES, ids=[case.id for case in CASES])
def case(request) -> Iterator[tuple[Case, Account]]:
    account = ACCOUNTS[request.param.platform]()
    yield request.param, account
    account.fake.stop()


@contextlib.contextmanager
def router_for(redis_server, tmp_path, account: Account) -> Iterator[redis.Redis]:
    """One real router holding this account, on an emptied Redis: its admin client."""
    admin = redis_server.admin_client()
    admin.flushall()
    settings = settings_for(redis_server.router_url, tmp_path, **account.env)
    try:
        with WorkerThread(settings, discover_skills(), account.credentials):
            yield admin
    finally:
        admin.flushall()
        admin.close()


def turn_on_the_kill_switch(redis_server) -> None:
    """As the dashboard does: the control login sets the live key."""
    control = redis.Redis.from_url(redis_server.control_url, socket_timeout=10)
    try:
        kill_switch.flip(control, redis_server.keys, True, "dashboard")
    finally:
        control.close()


def run_with_slow_step(redis_server, tmp_path, case: Case, account: Account, switch_on: bool) -> dict:
    """Send the case's command; while its slow step is held at the fake, turn the switch on (or
    not); then let the step finish. The command's reply."""
    method, path = case.slow(account)
    slow = account.fake.stall(path, method)
    with router_for(redis_server, tmp_path, account) as admin:
        keys = redis_server.keys
        command_id = push(admin, keys, case.action, case.params(account))
        assert slow.reached.wait(30), f"the router never reached {method} {path}"
        if switch_on:
            turn_on_the_kill_switch(redis_server)
        slow.release()
        reply = reply_of(admin, keys, command_id)
        lines = [json.loads(fields["line"]) for _, fields in admin.xrange(keys.audit_stream)]
    reply["audit"] = [line for line in lines if line.get("command_id") == command_id]
    return reply


def test_a_write_whose_slow_step_outlasts_the_switch_is_never_sent(redis_server, tmp_path, case):
    case_, account = case
    writes_before = len(account.writes())
    reply = run_with_slow_step(redis_server, tmp_path, case_, account, switch_on=True)
    assert (reply["status"], reply["error"]) == ("denied", "kill_switch"), reply
    assert "kill switch is on" in reply["message"] and "nothing was sent" in reply["message"]
    assert account.writes()[writes_before:] == [], "the write reached the platform after the switch went on"
    if case_.action == "DELETE_POST":
        assert account.exists(account.own)
    outcomes = [(line.get("status"), line.get("error")) for line in reply["audit"]]
    assert ("denied", "kill_switch") in outcomes, reply["audit"]


def test_with_the_switch_off_the_same_write_goes_out(redis_server, tmp_path, case):
    case_, account = case
    writes_before = len(account.writes())
    reply = run_with_slow_step(redis_server, tmp_path, case_, account, switch_on=False)
    assert reply["status"] == "ok", reply
    assert len(account.writes()[writes_before:]) == 1
    if case_.action == "DELETE_POST":
        assert not account.exists(account.own)


FIRST_CASE = {case.platform: case for case in reversed(CASES)}  # one per platform


@pytest.mark.parametrize("platform", sorted(FIRST_CASE))
def test_the_one_shot_tool_reads_the_live_switch_at_the_last_moment_too(redis_server, tmp_path, platform):
    case_, account = FIRST_CASE[platform], ACCOUNTS[platform]()
    try:
        method, path = case_.slow(account)
        slow = account.fake.stall(path, method)
        env = {"REDIS_URL": redis_server.router_url, "ROUTER_DATA_DIR": str(tmp_path),
               **account.credentials, **account.env}
        request = json.dumps({"action": case_.action, "params": case_.params(account)})
        answers: list[dict] = []
        tool = threading.Thread(target=lambda: answers.append(run_command(request, env)), daemon=True)
        tool.start()
        assert slow.reached.wait(30), f"the one-shot tool never reached {method} {path}"
        turn_on_the_kill_switch(redis_server)
        slow.release()
        tool.join(timeout=60)
        assert answers and answers[0]["success"] is False, answers
        assert answers[0]["reason"] == "kill_switch" and "nothing was sent" in answers[0]["message"]
        assert account.writes() == []
    finally:
        account.fake.stop()
        admin = redis_server.admin_client()
        admin.flushall()
        admin.close()


def last_moment_of(conn: redis.Redis, keys):
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": "hi"}, "t", ttl_seconds=60)
    return kill_switch_check(conn, keys, envelope, Effect("bsky", "post", "hi"))


def test_a_switch_nobody_can_read_stops_the_write_as_not_sent_not_as_the_owners_switch(redis_server):
    """Redis gone at the last moment (a failover, a partition): the write is not sent, and the reply
    says so as an `error` "not sent", not as a `denied` kill switch the owner never turned on."""
    unreachable = redis.Redis(port=free_port(), socket_connect_timeout=2)  # nothing listens there
    with pytest.raises(SkillError) as caught:
        last_moment_of(unreachable, redis_server.keys)()
    assert caught.value.kind == "redis_unavailable"
    assert "not sent" in caught.value.message and "kill switch is on" not in caught.value.message
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": "hi"}, "t", ttl_seconds=60)
    skills = discover_skills()
    planned = Planned(envelope, skills["CREATE_POST"], Effect("bsky", "post", "hi"))
    reply = Pipeline(skills, None, None, 1)._failure(planned, caught.value)  # type: ignore[arg-type]
    assert (reply.status, reply.error) == ("error", "redis_unavailable")


def test_a_switch_whose_read_redis_refuses_stops_the_write_as_the_switch(redis_server):
    """Redis answers, but refuses the read (NOPERM: an ACL that does not match the key names): fail
    closed as before, `kill_switch`, saying the read was refused, not that Redis is away."""
    router = redis.Redis.from_url(redis_server.router_url, socket_timeout=10)
    try:
        with pytest.raises(SkillError) as caught:
            last_moment_of(router, Keys(prefix="elsewhere:"))()
    finally:
        router.close()
    assert caught.value.kind == "kill_switch" and "refused its read" in caught.value.message


@pytest.mark.parametrize("value", ['{"on": "yes"}', "not json", None])
def test_the_live_key_decides_at_the_last_moment(redis_server, value):
    admin = redis_server.admin_client()
    router = redis.Redis.from_url(redis_server.router_url, socket_timeout=10)
    try:
        admin.delete(redis_server.keys.kill_switch)
        if value is not None:
            admin.set(redis_server.keys.kill_switch, value)
        check = last_moment_of(router, redis_server.keys)
        if value is None:
            check()  # off: the write goes
        else:
            with pytest.raises(SkillError) as caught:  # what cannot be read as {"on": bool} is on
                check()
            assert caught.value.kind == "kill_switch"
    finally:
        admin.delete(redis_server.keys.kill_switch)
        admin.close()
        router.close()
