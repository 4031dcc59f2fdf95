"""Skills that exist only in tests, registered by the tests themselves (never shipped).

SLOW_NOTE writes a note like NOTE, after `delay_seconds` (so a test can kill a router mid-run)
or crashes when `crash` is true (the poison-command tests). RAISE and RAISE_READ raise what their
params name, from `effect()` or `run()` (a write in the router's own lane, a read in a platform's);
the names include BaseExceptions no handler lists. `python -m
tests.support.router_test_skills --env-file F` runs the real router entry point with these added.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from router.policy.effects import LOCAL_PLATFORM, Effect, scopes
from router.registry import Skill, SkillContext
from router.skills.note.skill import SKILL as NOTE


def slow_note(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    if params.get("crash"):
        raise RuntimeError("SLOW_NOTE crash requested by the test")
    time.sleep(float(params.get("delay_seconds", 0)))
    return NOTE.run({"text": params["text"]}, ctx)


SLOW_NOTE = Skill(
    name="SLOW_NOTE",
    description="Tests only: NOTE after a delay, or a crash.",
    schema={
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 2000},
            "delay_seconds": {"type": "number", "minimum": 0, "maximum": 30},
            "crash": {"type": "boolean"},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    side_effect=True,
    run=slow_note,
    effect=lambda params: Effect(LOCAL_PLATFORM, "post", params["text"]),
    effects=scopes([LOCAL_PLATFORM], ["post"]),
)


class NotAnError(BaseException):
    """Tests only: a BaseException no handler names."""


RAISED: dict[str, type[BaseException]] = {
    "KeyboardInterrupt": KeyboardInterrupt, "SystemExit": SystemExit, "GeneratorExit": GeneratorExit,
    "BaseException": NotAnError, "RecursionError": RecursionError, "MemoryError": MemoryError,
}
RAISE_SCHEMA = {
    "type": "object",
    "properties": {"raise": {"enum": sorted(RAISED)}, "where": {"enum": ["effect", "run"]}},
    "required": ["raise", "where"],
    "additionalProperties": False,
}


def _raising(platform: str, kind: str) -> Skill:
    def effect(params: dict[str, Any]) -> Effect:
        if params["where"] == "effect":
            raise RAISED[params["raise"]]("raised by the test skill's effect()")
        return Effect(platform, kind, "raised on purpose")

    def run(params: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
        raise RAISED[params["raise"]]("raised by the test skill's run()")

    name = "RAISE" if kind == "post" else "RAISE_READ"
    return Skill(name=name, description="Tests only: raises what its params name.", schema=RAISE_SCHEMA,
                 side_effect=kind == "post", run=run, effect=effect, effects=scopes([platform], [kind]))


RAISE = _raising(LOCAL_PLATFORM, "post")
RAISE_READ = _raising("mastodon", "read")
TEST_SKILLS = {SLOW_NOTE.name: SLOW_NOTE}
RAISING_SKILLS = {RAISE.name: RAISE, RAISE_READ.name: RAISE_READ}  # the launcher adds these too


if __name__ == "__main__":
    from router.start_router import main

    sys.exit(main(sys.argv[1:], extra_skills={**TEST_SKILLS, **RAISING_SKILLS}))
