"""Skills: what the router can do, each in `router/skills/<name>/skill.py`, found at start-up.

A skill module defines `SKILL = Skill(...)`. The router trusts only this registry: an action
the agent names that is not here is denied, and params are validated against `Skill.schema`.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from router.policy.effects import LOCAL_PLATFORM, WRITE_KINDS, Effect, Scope

SKILLS_DIR = Path(__file__).resolve().parent / "skills"


@dataclass
class SkillContext:
    """What a running skill may use. Credentials reach skills only through this object."""

    command_id: str  # also the idempotency key a platform may be given
    conversation: str
    credentials: Mapping[str, str] = field(repr=False)  # every loaded credential variable (router side only)
    env: Mapping[str, str]  # non-secret settings such as base URL overrides
    data_dir: Path  # files the router owns (notes, outbox)
    dry_run: bool = False  # side-effecting skills record what they would send instead of sending
    approved: bool = False  # the owner approved this very command: its words go out whole or not at all
    max_text_chars: int = 2000  # truncation length for untrusted text
    timeout: float = 20.0  # seconds for one platform request
    # Asked right before each write request leaves (`router.policy.last_moment`): raises
    # SkillError("kill_switch") when the owner's switch is on by then. None: nothing live to read.
    last_moment: Callable[[], None] | None = None
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("safeclaw.router.skill"))


SkillRun = Callable[[dict[str, Any], SkillContext], dict[str, Any]]
SkillEffect = Callable[[dict[str, Any]], Effect]


@dataclass(frozen=True)
class Skill:
    """One action. `effect(params)` says, before the run, what the run will do (policy decides on
    that); `effects` lists every scope the skill can have (policy settings naming the action mean
    these). Without them a skill is a local one: `router:post` if it has a side effect, else
    `router:read`."""

    name: str  # the action name, e.g. "CREATE_POST"
    description: str
    schema: dict[str, Any]  # JSON Schema of params; additionalProperties should be false
    side_effect: bool  # True: runs at most once per command id, dry_run applies
    run: SkillRun
    effect: SkillEffect | None = None
    effects: frozenset[Scope] = frozenset()
    # Whether a result holds text other people wrote (posts, notifications, a feed): the agent then
    # counts the turn as having read outside text. None: every read of a platform does (fail closed),
    # no write does (its result is the owner's own: an id, a URL, "liked").
    others_words: bool | None = None
    _validator: Any = field(default=None, init=False, repr=False, compare=False)
    _empty_is_valid: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        local = Effect(LOCAL_PLATFORM, "post" if self.side_effect else "read")
        if self.effect is None:
            object.__setattr__(self, "effect", lambda _params: local)
            object.__setattr__(self, "effects", self.effects or frozenset({local.scope}))
        if not self.effects:
            raise ValueError(f"skill {self.name} states an effect function but no effects it can have")
        writes = {scope.kind in WRITE_KINDS for scope in self.effects}
        if writes != {self.side_effect}:
            raise ValueError(f"skill {self.name}: side_effect={self.side_effect} disagrees with its effects "
                             f"{', '.join(map(str, sorted(self.effects)))}")
        if self.others_words is None:
            reads_platform = any(s.platform != LOCAL_PLATFORM for s in self.effects)
            object.__setattr__(self, "others_words", reads_platform and not self.side_effect)
        object.__setattr__(self, "_validator", jsonschema.Draft202012Validator(self.schema))
        # Checked once: no params at all (PING) is the commonest command and its answer never changes.
        object.__setattr__(self, "_empty_is_valid", self._validator.is_valid({}))

    def effect_of(self, params: dict[str, Any]) -> Effect:
        """The effect of valid params; ValueError when the skill states one it did not declare."""
        assert self.effect is not None  # set in __post_init__
        effect = self.effect(params)
        if effect.scope not in self.effects:
            raise ValueError(f"{self.name} stated the effect {effect.scope}, which it does not declare")
        return effect

    def validation_error(self, params: Any) -> str | None:
        """A one-line reason the params are invalid, or None when they are valid."""
        if isinstance(params, dict) and not params and self._empty_is_valid:
            return None
        try:
            json.dumps(params, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # JSON may carry half an emoji ("\ud83d"); nothing can store it
            return "params: a string holds a lone surrogate (not valid Unicode text)"
        except (TypeError, ValueError):
            pass  # not JSON-like: the schema below says what is wrong
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(params))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "params"
        return f"{where}: {error.message}"[:300]


def discover_skills(skills_dir: Path = SKILLS_DIR) -> dict[str, Skill]:
    """Import every `skills/<folder>/skill.py` and index its SKILL by action name."""
    skills: dict[str, Skill] = {}
    for module_file in sorted(skills_dir.glob("*/skill.py")):
        module = importlib.import_module(f"router.skills.{module_file.parent.name}.skill")
        skill = getattr(module, "SKILL", None)
        if not isinstance(skill, Skill):
            raise TypeError(f"{module_file} defines no SKILL = Skill(...)")
        if skill.name in skills:
            raise ValueError(f"two skills are named {skill.name}")
        jsonschema.Draft202012Validator.check_schema(skill.schema)
        skills[skill.name] = skill
    return skills
