"""Values that never print: a settings object or a credentials holder keeps its secrets here, so
`repr`, `str`, a log line or a traceback with its locals shows the names and never the values.

`HiddenValues` is a dict (an environment, a platform's credentials) whose every printed form names
its keys only; a value is read as from any dict, `hidden["NAME"]`. A dataclass's single secret
string is a `field(repr=False)` instead (a dataclass's `str` is its `repr`).
"""

from __future__ import annotations


class HiddenValues(dict[str, str]):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"HiddenValues(names={sorted(self)!r})"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)
