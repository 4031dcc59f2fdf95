"""Typed reading of one object of config.json: every error names the file and the dotted key.

    section = Section.root(data, Path("agent/config.json"))
    browser = section.child("browser")
    browser.number("total_timeout", 45, 1, 600)   # "agent/config.json: 'browser.total_timeout' must be …"
    browser.refuse_unknown(("allow_private_addresses", "page_load_timeout", "total_timeout"))

A typo is refused rather than ignored (configuration fails closed): `refuse_unknown` lists the
keys the section knows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agent.errors import ConfigError

Env = Mapping[str, str]


def shown(value: Any) -> str:
    """A short JSON rendering of a bad value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def env_text(env: Env, name: str) -> str:
    """The variable's value without surrounding spaces; "" when unset."""
    return (env.get(name) or "").strip()


class Section:
    """One JSON object of the config file and where it sits (file, dotted key)."""

    def __init__(self, data: Mapping[str, Any], where: Path | str, key: str = "") -> None:
        self.data = data
        self.where = str(where)
        self.key = key

    @classmethod
    def root(cls, data: Mapping[str, Any], where: Path | str) -> Section:
        return cls(data, where)

    def name(self, key: str) -> str:
        return f"{self.key}.{key}" if self.key else key

    def error(self, key: str, must: str) -> ConfigError:
        value = f", not {shown(self.data[key])}" if key in self.data else ""
        return ConfigError(f"{self.where}: '{self.name(key)}' must be {must}{value}")

    def has(self, key: str) -> bool:
        return key in self.data

    def child(self, key: str) -> Section:
        """The object under `key`; an absent (or null) one reads as empty."""
        value = self.data.get(key)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise self.error(key, "an object")
        return Section(value, self.where, self.name(key))

    def number(self, key: str, default: float, low: float, high: float) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise self.error(key, f"a number from {low:g} to {high:g}")
        return float(value)

    def whole(self, key: str, default: int, low: int, high: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.error(key, f"a whole number from {low} to {high}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, "true or false")
        return value

    def text(self, key: str, default: str) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self.error(key, "a string")
        return value.strip()

    def list_of(self, key: str, kind: type, described: str) -> list[Any]:
        """A JSON list whose items are all of `kind` (bool is never an int here)."""
        value = self.data.get(key, [])
        ok = isinstance(value, list) and all(
            isinstance(item, kind) and not (kind is int and isinstance(item, bool)) for item in value
        )
        if not ok:
            raise self.error(key, f"a list of {described}")
        return list(value)

    def refuse_unknown(self, known: Iterable[str]) -> None:
        names = list(known)
        for key in self.data:
            if key not in names:
                where = f"'{self.name(key)}'"
                raise ConfigError(
                    f"{self.where}: {where} is not a setting SafeClaw knows (a typo?); "
                    f"known in {self.key or 'the top level'}: {', '.join(names)}"
                )
