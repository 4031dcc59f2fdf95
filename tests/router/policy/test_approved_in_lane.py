"""An approved command runs in its platform's lane, like any other: one that hangs on its
platform delays neither a PING nor another platform, and still runs once, audited and settled."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import redis

from protocol import approvals
from router.policy.effects import Effect, scopes
from router.registry import Skill, SkillContext
from tests.router.router_helpers import MY_SKILLS, WorkerThread, push, reply_of, settings_for, wait_until

HANGING_PLATFORM = "slowland"


class Hang:
    """A platform that takes the request and answers only when the test lets it."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.runs: list[str] = []

    def run(self, params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
        self.runs.append(params["text"])
        self.started.set()
        self.release.wait(30)
        return {"posted": params["text"]}


@pytest.fixture
def hang():
    platform = Hang()
    yield platform
    platform.release.set()  # never leave a lane thread behind


def hanging_skill(hang: Hang) -> Skill:
    return Skill(
        name="HANG_POST",
        description="Tests only: a post on a platform that hangs until released.",
        schema={
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1}},
            "required": ["text"],
            "additionalProperties": False,
        },
        side_effect=True,
        run=hang.run,
        effect=lambda params: Effect(HANGING_PLATFORM, "post", params["text"]),
        effects=scopes([HANGING_PLATFORM], ["post"]),
    )


def test_an_approved_command_on_a_hanging_platform_delays_no_ping(redis_urls, tmp_path, hang):
    keys = redis_urls.keys
    admin = redis_urls.admin_client()
    control = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="HANG_POST")
    try:
        with WorkerThread(settings, {**MY_SKILLS, "HANG_POST": hanging_skill(hang)}):
            held_id = push(
                admin, keys, "HANG_POST", {"text": "approved, then stuck"}, conversation="telegram:42"
            )
            held = reply_of(admin, keys, held_id, timeout=10)
            assert held["status"] == "pending_approval", held
            approvals.decide(control, keys, held["approval_id"], "approve", "dashboard")
            assert hang.started.wait(10), "the approved command never started"
            ping = reply_of(admin, keys, push(admin, keys, "PING", {}, ttl=8), timeout=10)
            note = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "meanwhile"}, ttl=8), timeout=10)
            # Both answered while the approved command is still in its platform's hands.
            assert not hang.release.is_set() and not admin.exists(keys.response(held_id))
            assert ping["status"] == "ok" and note["status"] == "ok"
            hang.release.set()
            done = reply_of(admin, keys, held_id, timeout=15)
            wait_until(
                lambda: json.loads(admin.get(keys.approval(held["approval_id"])))["state"] == "approved",
                "the approval to settle",
            )
            wait_until(
                lambda: admin.llen(keys.approvals_taken("r1")) == 0, "the approval to leave the taken list"
            )
        assert done["status"] == "ok" and hang.runs == ["approved, then stuck"]
        record = json.loads(admin.get(keys.approval(held["approval_id"])))
        assert record["outcome"]["status"] == "ok"
        audited = [
            json.loads(line)
            for path in sorted((tmp_path / "audit").glob("*.jsonl"))
            for line in path.read_text().splitlines()
        ]
        runs = [
            a for a in audited if a.get("command_id") == held_id and a["decision"].startswith("approved by")
        ]
        # Its line before the write (audit before effect), then its outcome.
        assert [r["status"] for r in runs] == ["started", "ok"]
        assert {r["approval_id"] for r in runs} == {held["approval_id"]}
    finally:
        admin.close()
        control.close()


def test_an_approved_command_whose_lane_is_full_stays_held_and_runs_once_later(redis_urls, tmp_path, hang):
    keys = redis_urls.keys
    admin = redis_urls.admin_client()
    control = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    settings = settings_for(
        redis_urls.router_url,
        tmp_path,
        ROUTER_REQUIRE_APPROVAL="HANG_POST",
        ROUTER_PLATFORM_CONCURRENCY="1",
        ROUTER_PLATFORM_BACKLOG="0",
    )

    def state(approval_id: str) -> str:
        return str(json.loads(admin.get(keys.approval(approval_id)))["state"])

    try:
        with WorkerThread(settings, {**MY_SKILLS, "HANG_POST": hanging_skill(hang)}) as worker:
            first_id = push(admin, keys, "HANG_POST", {"text": "first"})
            first = reply_of(admin, keys, first_id, timeout=10)
            # Its lane slot frees just after its reply is out; a command taken before is `busy`.
            wait_until(lambda: worker.lanes.pending("slowland") == 0, "the first command to leave its lane", 10)
            second_id = push(admin, keys, "HANG_POST", {"text": "second"})  # one at a time: one lane slot
            second = reply_of(admin, keys, second_id, timeout=10)
            assert first.get("status") == second.get("status") == "pending_approval", (first, second)
            approvals.decide(control, keys, first["approval_id"], "approve", "dashboard")
            assert hang.started.wait(10), "the first approved command never started"
            approvals.decide(control, keys, second["approval_id"], "approve", "dashboard")
            wait_until(lambda: admin.llen(keys.approvals_decided) == 0, "the router to take the decision")
            # The lane is full: the second is neither run nor lost; it waits in the taken list.
            assert hang.runs == ["first"] and state(second["approval_id"]) == "pending"
            assert second["approval_id"] in admin.lrange(keys.approvals_taken("r1"), 0, -1)
            assert not admin.exists(keys.response(second_id))
            hang.release.set()
            replies = [reply_of(admin, keys, cid, timeout=20) for cid in (first_id, second_id)]
            wait_until(lambda: state(second["approval_id"]) == "approved", "the second approval to settle")
            wait_until(lambda: admin.llen(keys.approvals_taken("r1")) == 0, "the taken list to drain")
        assert [r["status"] for r in replies] == ["ok", "ok"]
        assert sorted(hang.runs) == ["first", "second"] and state(first["approval_id"]) == "approved"
    finally:
        admin.close()
        control.close()
