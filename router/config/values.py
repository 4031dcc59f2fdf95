"""How a router setting's value is read: plainly, within a range, or not at all.

Python's `int()` takes "+5", "1_000", full-width and Arabic-Indic digits; a setting takes ASCII
digits only. Every number has a ceiling, so a typo of a few zeros cannot make an expiry Redis
refuses (which would fail every command at run time instead of the router at start) or start a
hundred thousand threads. Out of range or unreadable: a ConfigError that names the setting.
"""

from __future__ import annotations

from router.errors import ConfigError

DAY_SECONDS = 24 * 3600
MAX_SECONDS = 365 * DAY_SECONDS  # no expiry, window, pause or gap longer than a year
MAX_COUNT = 1_000_000_000  # no count (quota, rate limit) above a billion


def whole_number(setting: str, raw: str, minimum: int, maximum: int, item: str = "") -> int:
    """`raw` (already stripped) as a whole number in [minimum, maximum]; else a ConfigError."""
    where = f" in {item!r}" if item else ""
    if raw.isascii() and raw.isdigit() and len(raw) <= 20 and minimum <= int(raw) <= maximum:
        return int(raw)
    raise ConfigError(f"{setting}: {raw!r}{where} is not a whole number from {minimum} to {maximum}")


def no_repeats(setting: str, names: list[str]) -> None:
    """One scope named twice with two values is ambiguous: say so rather than pick one."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(f"{setting}: {name!r} is given twice; keep one")
        seen.add(name)
