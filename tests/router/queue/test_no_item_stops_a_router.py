"""No item stops a router, whatever it holds: every step that handles one item (decode, plan, run,
settle, sweep, recover) runs inside one containment that sets the item aside with its reason and
goes on, whatever the exception's type or value. The items here are shapes no guard listed."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import redis

from router.policy.effects import LOCAL_PLATFORM, Effect, scopes
from router.registry import Skill, SkillContext
from tests.router.router_helpers import MY_SKILLS, WorkerThread, push, reply_of, settings_for, wait_until

HUGE = "7" * 5000  # past Python's 4,300-digit limit: json.loads raises a plain ValueError


class Unprintable(Exception):
    """An exception whose message cannot even be formatted."""

    def __str__(self) -> str:
        raise ValueError(int(HUGE))  # str() of this int raises too


def effect_skill(name: str, effect: Any) -> Skill:
    return Skill(
        name=name,
        description="Tests only: a skill whose effect() misbehaves.",
        schema={"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False},
        side_effect=True,
        run=lambda params, ctx: {"ran": True},
        effect=effect,
        effects=scopes([LOCAL_PLATFORM], ["post"]),
    )


def raise_index(params: dict[str, Any]) -> Effect:
    return [][1]  # type: ignore[no-any-return]


def raise_unprintable(params: dict[str, Any]) -> Effect:
    raise Unprintable()


def raise_huge_value(params: dict[str, Any]) -> Effect:
    raise ArithmeticError(int(HUGE))


def crash_with_huge_value(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    raise LookupError(int(HUGE))


BAD_SKILLS: dict[str, Skill] = {
    "INDEX_EFFECT": effect_skill("INDEX_EFFECT", raise_index),
    "UNPRINTABLE_EFFECT": effect_skill("UNPRINTABLE_EFFECT", raise_unprintable),
    "HUGE_EFFECT": effect_skill("HUGE_EFFECT", raise_huge_value),
    "NO_EFFECT": effect_skill("NO_EFFECT", lambda params: None),
    "HUGE_CRASH": Skill(
        name="HUGE_CRASH", description="Tests only: a read that crashes with a huge value.",
        schema={"type": "object"}, side_effect=False, run=crash_with_huge_value,
        effect=lambda params: Effect(LOCAL_PLATFORM, "read"), effects=scopes([LOCAL_PLATFORM], ["read"]),
    ),
}
SKILLS = {**MY_SKILLS, **BAD_SKILLS}


def envelope_json(action: str = "PING", params: str = "{}", command_id: str = "cmd-1") -> bytes:
    return (
        f'{{"id": "{command_id}", "action": "{action}", "params": {params}, "conversation": "t", '
        f'"created_at": 1, "expires_at": 99999999999, "v": 1}}'
    ).encode()


HUGE_ITEMS = [
    envelope_json(params=f'{{"n": {HUGE}}}'),  # a huge int in the params
    f'{{"id": "cmd-2", "n": {HUGE}}}'.encode(),  # in an item that is no command either
    envelope_json().replace(b'"v": 1', f'"v": {HUGE}'.encode()),  # as the protocol version
    f"[{HUGE}]".encode(),
]


def dead_letters(admin: redis.Redis, keys: Any) -> list[dict[str, Any]]:
    return [json.loads(entry) for entry in admin.lrange(keys.dead_letter, 0, -1)]


def ping_answered(admin: redis.Redis, keys: Any) -> None:
    reply = reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=20)
    assert reply["status"] == "ok", reply


@pytest.mark.parametrize("item", HUGE_ITEMS, ids=["params", "no-command", "version", "list"])
def test_an_item_with_a_huge_integer_is_set_aside_and_the_router_goes_on(redis_urls, admin, tmp_path, item):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), SKILLS) as worker:
        admin.lpush(keys.command_queue, item)
        ping_answered(admin, keys)
        assert admin.llen(keys.processing("r1")) == 0
        assert not worker.stop_event.is_set()
    [entry] = dead_letters(admin, keys)
    assert "malformed" in entry["reason"] or "router error" in entry["reason"], entry


@pytest.mark.parametrize("item", HUGE_ITEMS[:2], ids=["params", "no-command"])
def test_a_huge_integer_left_in_processing_lists_does_not_stop_the_restart(redis_urls, admin, tmp_path, item):
    keys = redis_urls.keys
    admin.lpush(keys.processing("r1"), item)  # this router died holding it
    admin.lpush(keys.processing("gone"), item)  # and a router whose heartbeat is gone
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), SKILLS):
        wait_until(lambda: len(dead_letters(admin, keys)) == 2, "both set aside", 20)
        ping_answered(admin, keys)
    assert admin.llen(keys.processing("r1")) == 0 and admin.llen(keys.processing("gone")) == 0


@pytest.mark.parametrize("action", sorted(BAD_SKILLS))
def test_a_skill_that_fails_to_state_its_effect_is_contained(redis_urls, admin, tmp_path, action):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), SKILLS) as worker:
        reply = reply_of(admin, keys, push(admin, keys, action, {}), timeout=20)
        assert reply["status"] in ("error", "denied", "unknown"), reply
        ping_answered(admin, keys)
        assert not worker.stop_event.is_set()
    assert admin.llen(keys.processing("r1")) == 0
    assert json.dumps(reply).count("7" * 400) == 0  # a reason is bounded, never the whole value


def held(admin: redis.Redis, keys: Any) -> str:
    reply = reply_of(admin, keys, push(admin, keys, "NOTE", {"text": "needs the owner"}, conversation="telegram:1"))
    assert reply["status"] == "pending_approval", reply
    return str(reply["approval_id"])


@pytest.mark.slow
@pytest.mark.parametrize("ts", ['"now"', HUGE, "[]", '{"a": 1}'])
@pytest.mark.parametrize("pushed", [True, False], ids=["settled", "swept"])
def test_an_owner_decision_with_a_bad_time_is_set_aside_on_settle_and_sweep(
        redis_urls, admin, tmp_path, ts, pushed):
    keys = redis_urls.keys
    control = redis.Redis.from_url(redis_urls.control_url, decode_responses=True)
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_REQUIRE_APPROVAL="NOTE")
    try:
        with WorkerThread(settings, SKILLS) as worker:
            approval_id = held(admin, keys)
            control.set(keys.approval_decision(approval_id), f'{{"decision": "approve", "by": "x", "ts": {ts}}}')
            if pushed:
                control.lpush(keys.approvals_decided, approval_id)
            wait_until(lambda: any(approval_id in json.dumps(e) for e in dead_letters(admin, keys)),
                       "the approval set aside", 20)
            ping_answered(admin, keys)
            assert not worker.stop_event.is_set()
        with WorkerThread(settings, SKILLS):  # a restart does not die on it either
            ping_answered(admin, keys)
        assert not (tmp_path / "notes.jsonl").exists()  # a decision it cannot read runs nothing
        assert admin.llen(keys.approvals_taken("r1")) == 0
        assert admin.zscore(keys.approvals_pending, approval_id) is None
    finally:
        control.close()


def test_contained_failures_in_every_step_leave_the_heartbeat_thread_alive(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), SKILLS):
        for item in HUGE_ITEMS:
            admin.lpush(keys.command_queue, item)
        for action in BAD_SKILLS:
            push(admin, keys, action, {})
        ping_answered(admin, keys)
        assert any(t.name == "router-heartbeat" and t.is_alive() for t in threading.enumerate())
