"""Whatever a skill raises, from `effect()` or `run()`, in the router's loop or in a platform's
lane, the command is answered and the router goes on: not only the exceptions a handler names,
but SystemExit, KeyboardInterrupt, GeneratorExit and a BaseException of its own too. A fleet of
two real router processes on a real redis-server takes them all; neither exits, both beat, and
each lane still serves the next command."""

from __future__ import annotations

import dataclasses
import signal
from typing import Any

import pytest
import redis

from tests.router.router_helpers import (
    MY_SKILLS,
    RouterProcess,
    WorkerThread,
    note_lines,
    push,
    reply_of,
    router_env,
    settings_for,
    wait_until,
)
from tests.support.router_test_skills import RAISED, RAISING_SKILLS

SKILLS = {**MY_SKILLS, **RAISING_SKILLS}
CASES = [(action, name, where) for action in sorted(RAISING_SKILLS) for name in sorted(RAISED)
         for where in ("effect", "run")]


def answered(admin: redis.Redis, keys: Any, action: str, name: str, where: str) -> dict[str, Any]:
    reply = reply_of(admin, keys, push(admin, keys, action, {"raise": name, "where": where}), timeout=30)
    assert reply["status"] in ("error", "denied", "unknown"), reply
    return reply


@pytest.mark.parametrize(("action", "name", "where"), CASES, ids=[f"{a}-{n}-{w}" for a, n, w in CASES])
def test_a_command_whose_skill_raises_anything_is_answered_and_the_router_goes_on(
        redis_urls, admin, tmp_path, action, name, where):
    keys = redis_urls.keys
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), SKILLS) as worker:
        answered(admin, keys, action, name, where)
        answered(admin, keys, action, name, where)  # the same lane serves the next one
        assert reply_of(admin, keys, push(admin, keys, "SLOW_NOTE", {"text": "still here"}))["status"] == "ok"
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
        assert not worker.stop_event.is_set()
    assert [line["text"] for line in note_lines(tmp_path)] == ["still here"]
    assert admin.llen(keys.processing("r1")) == 0


@pytest.mark.slow
def test_a_fleet_of_real_routers_outlives_every_kind_of_raise(redis_urls, admin, tmp_path):
    keys = redis_urls.keys
    routers = [RouterProcess(router_env(redis_urls.router_url, tmp_path, router_id=r)) for r in ("r1", "r2")]
    try:
        assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        ids = [push(admin, keys, action, {"raise": name, "where": where}) for action, name, where in CASES]
        for command_id in ids:
            assert reply_of(admin, keys, command_id, timeout=30)["status"] in ("error", "denied", "unknown")
        for _ in range(4):  # both routers' lanes and loops still serve
            assert reply_of(admin, keys, push(admin, keys, "RAISE_READ", {"raise": "SystemExit", "where": "run"}),
                            timeout=30)["status"] == "error"
            assert reply_of(admin, keys, push(admin, keys, "PING", {}), timeout=30)["status"] == "ok"
        for router in routers:
            assert router.process.poll() is None, router.log_path.read_text()
        for router_id in ("r1", "r2"):
            # alive and beating (a router still starting on a loaded machine beats a moment later)
            wait_until(lambda r=router_id: admin.exists(keys.router_heartbeat(r)), f"{router_id}'s heartbeat", 30)
            wait_until(lambda r=router_id: admin.llen(keys.processing(r)) == 0, f"{router_id}'s list empty", 20)
        for router in routers:
            router.signal(signal.SIGTERM)
            assert router.wait(30) == 0, router.log_path.read_text()
    finally:
        for router in routers:
            router.stop()


def test_the_programs_own_ctrl_c_is_not_taken_for_a_skills_crash(monkeypatch):
    """The one-shot tool runs a skill in its main thread, where a Ctrl-C raises SystemExit(130)
    from its handler (`protocol.ctrl_c`): the pipeline lets that one through, as asked, while a
    SystemExit the skill raises itself is its crash."""
    from protocol import ctrl_c
    from protocol.commands import CommandEnvelope
    from router.config.settings import RouterSettings
    from router.pipeline import Pipeline
    from router.policy.checks import Policy
    from router.redaction import Redactor
    from router.registry import SkillContext

    def pressed_ctrl_c(params, ctx):
        ctrl_c._leave(signal.SIGINT, None)  # what the handler does when the signal comes
        return {}

    monkeypatch.setattr(ctrl_c, "_leaving", False)
    skill = RAISING_SKILLS["RAISE"]
    skills = {"RAISE": skill}
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:pw@127.0.0.1:1/0"})
    redactor = Redactor([])
    pipeline = Pipeline(skills, Policy(settings, skills, redactor), redactor)
    planned = pipeline.plan(CommandEnvelope.new("RAISE", {"raise": "SystemExit", "where": "run"}, "t", 60))
    ctx = SkillContext(timeout=5, command_id="c", conversation="t", credentials={}, env={}, data_dir=None,
                       dry_run=False, log=None)
    assert pipeline.run(planned, ctx).reply.status == "unknown"  # the skill's own SystemExit: a crash
    pressing = dataclasses.replace(planned, skill=dataclasses.replace(skill, run=pressed_ctrl_c))
    with pytest.raises(SystemExit) as ended:
        pipeline.run(pressing, ctx)
    assert ended.value.code == ctrl_c.INTERRUPTED


@pytest.mark.slow
def test_raising_commands_left_in_processing_lists_do_not_stop_the_restart(redis_urls, admin, tmp_path):
    """Recovery takes the same steps: a raising command this router (or a router whose heartbeat
    is gone) left in its list is answered at the next start, which goes on."""
    from protocol.commands import CommandEnvelope
    from tests.router.router_helpers import OWNER_TURN

    keys = redis_urls.keys
    left = []
    for action, name, where in CASES:
        envelope = CommandEnvelope.new(action, {"raise": name, "where": where}, "t", 120, origin=OWNER_TURN)
        admin.lpush(keys.processing("r1" if len(left) % 2 else "gone"), envelope.to_json())
        left.append(envelope.id)
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), SKILLS) as worker:
        for command_id in left:
            assert reply_of(admin, keys, command_id, timeout=30)["status"] in ("error", "denied", "unknown")
        assert reply_of(admin, keys, push(admin, keys, "PING", {}))["status"] == "ok"
        assert not worker.stop_event.is_set()
    assert admin.llen(keys.processing("r1")) == 0 and admin.llen(keys.processing("gone")) == 0
