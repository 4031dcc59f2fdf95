"""Reading settings from a dotenv file and the process environment, for every SafeClaw process.

One reader, one boolean parser and one merge, so the router, the dashboard and the scripts agree
on what a file says. Policy settings merge by strictness, not by source: an empty value never
weakens a policy, and two sources that disagree give the stricter value and a note saying so.
A name that is one fold away from a known setting (another case, `-` or `.` for `_`, a Cyrillic
letter, a missing prefix) is a mistake the reader refuses rather than ignores.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv.parser import parse_stream

from protocol.spellings import fold_char

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


class SettingError(ValueError):
    """A setting or a settings file is wrong; the message names it (never its value)."""


def parse_bool(name: str, raw: str | None, default: bool = False) -> bool:
    """`true/false`, `yes/no`, `on/off`, `1/0` in any case; empty or missing is `default`."""
    text = (raw or "").strip().lower()
    if not text:
        return default
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise SettingError(f"{name} must be true or false, not {text!r}")


def read_env_file(path: Path | None) -> dict[str, str]:
    """NAME=VALUE pairs of a dotenv file ({} when there is none), refusing any line python-dotenv
    would skip or guess at: no `=`, an unclosed quote, a name with no value, one name given two
    values. Lines are named by number and name only: a value may be a secret."""
    if path is None or not path.is_file():
        return {}
    where = path.name
    try:
        with path.open(encoding="utf-8") as stream:
            bindings = list(parse_stream(stream))
    except UnicodeDecodeError:
        raise SettingError(f"{where} is not UTF-8 text; save it as UTF-8") from None
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for binding in bindings:
        line = binding.original.line
        if binding.error:
            raise SettingError(f"{where} line {line} is not NAME=VALUE (nothing is guessed)")
        key = binding.key
        if key is None:
            continue  # a comment or a blank line
        if binding.value is None:
            raise SettingError(f"{where} line {line}: {key} has no '=' and no value")
        if key in values and values[key] != binding.value:
            raise SettingError(f"{where}: {key} has two values (lines {lines[key]} and {line}); keep one")
        values[key] = binding.value
        lines[key] = line
    return values


def fold_name(name: str) -> str:
    """A setting name as it was probably meant: look-alike letters as ASCII, upper case, and
    `-`, `.`, spaces and quotes as `_`, so `router-kill.switch` and `ROUTЕR_KILL_SWITCH` (a
    Cyrillic Е) both read ROUTER_KILL_SWITCH."""
    folded = "".join(fold_char(c) if not c.isascii() else c for c in name.strip().strip("'\""))
    return "".join("_" if c in "-. \t" else c for c in folded).upper()


def near_miss(
    name: str, known: Iterable[str], prefix: str = "", bare: Iterable[str] | None = None
) -> str | None:
    """The known setting `name` is a misspelling of, or None when it is one or is unrelated.

    A near miss folds to a known name, is within a letter or two of one, has a plural prefix
    (ROUTERS_), or is one of the `bare` names (default: all) spelt another way: without its prefix
    (KILL_SWITCH), without separators or with doubled ones (KILLSWITCH, ROUTER__KILL_SWITCH), its
    words in another order (KILL_SWITCH_ROUTER), inside a longer name (SAFECLAW_ROUTER_KILL_SWITCH)
    or a letter or two away once the prefix is gone (R_KILL_SWITCH). Names are compared by their
    letters and digits, not by a list of separators."""
    known_set = frozenset(known)
    bare_set = known_set if bare is None else frozenset(bare)
    if name in known_set:
        return None
    folded = fold_name(name)
    by_fold = {fold_name(k): k for k in known_set}
    if folded in by_fold:
        return by_fold[folded]
    if prefix and len(folded) >= 6:
        if prefix + folded in bare_set:
            return prefix + folded
        head, _, rest = folded.partition("_")
        if rest and head.startswith(prefix.rstrip("_")) and prefix + rest in known_set:
            return prefix + rest
    close = difflib.get_close_matches(folded, sorted(by_fold), n=1, cutoff=0.88)
    if close and len(folded) >= 8:
        return by_fold[close[0]]
    return _bare_spelling(folded, bare_set, prefix)


def _words(folded: str) -> list[str]:
    return [word for word in "".join(c if c.isalnum() else " " for c in folded).split() if word]


def _bare_spelling(folded: str, bare: frozenset[str], prefix: str) -> str | None:
    """The `bare` setting `folded` spells with other separators, words or surroundings, or None."""
    words = _words(folded)
    letters = "".join(words)
    prefix_words = set(_words(prefix))
    own = sorted(w for w in words if w.rstrip("S") not in prefix_words)
    for setting in sorted(bare):
        setting_words = _words(setting)
        core = [w for w in setting_words if w not in prefix_words] or setting_words
        whole, core_letters = "".join(setting_words), "".join(core)
        if len(whole) >= 8 and whole in letters:
            return setting
        if letters == core_letters or own == sorted(core):
            return setting
        if len(core_letters) >= 8 and difflib.SequenceMatcher(None, letters, core_letters).ratio() >= 0.88:
            return setting
    return None


def check_names(
    values: Mapping[str, str],
    known: Iterable[str],
    where: str,
    prefix: str = "",
    bare: Iterable[str] | None = None,
    refuse_unknown: bool = False,
) -> None:
    """A SettingError for the first name that misspells a known setting; with `refuse_unknown` (a
    process's own env file, where every line is meant for it) also for any name it does not read."""
    known_set = frozenset(known)
    for name in sorted(values):
        meant = near_miss(name, known_set, prefix, bare)
        if meant is not None:
            raise SettingError(
                f"{where}: {name!r} is not a setting; did you mean {meant}? Nothing is guessed: fix the name"
            )
        if refuse_unknown and name not in known_set:
            close = difflib.get_close_matches(fold_name(name), sorted(known_set), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else "the settings are listed in .env.example"
            raise SettingError(f"{where}: {name!r} is not a setting this process reads ({hint})")


Stricter = Callable[[str, str], str]  # of two non-empty values of one setting, the stricter


def stricter_bool(prefer: bool) -> Stricter:
    """For a boolean policy setting where `prefer` is the strict side (kill switch: True)."""

    def pick(a: str, b: str) -> str:
        return a if parse_bool("", a) is prefer else b

    return pick


def stricter_union(a: str, b: str) -> str:
    """For a comma list where each item adds a restriction (actions held for approval)."""
    items = [i.strip() for i in f"{a},{b}".split(",") if i.strip()]
    return ",".join(dict.fromkeys(items))


@dataclass
class Merged:
    values: dict[str, str]
    notes: list[str] = field(default_factory=list)  # one line per policy setting whose sources disagreed


def merge_sources(
    file_values: Mapping[str, str],
    environ: Mapping[str, str],
    policy: Mapping[str, Stricter],
    file_label: str = "the env file",
) -> Merged:
    """The environment wins over the file, except for policy settings: there an empty value never
    weakens a set one, and two set values that differ give the stricter (and a note)."""
    values = {**file_values, **environ}
    notes: list[str] = []
    for name, stricter in policy.items():
        in_file = (file_values.get(name) or "").strip()
        in_env = (environ.get(name) or "").strip()
        if not in_file or not in_env:
            chosen = in_file or in_env
            if chosen:
                values[name] = chosen
            if name in environ and not in_env and in_file:
                notes.append(f"{name} is empty in the environment; {file_label} sets it, so that holds")
            continue
        if _same(in_file, in_env):
            continue
        try:
            chosen = stricter(in_file, in_env)
        except SettingError:
            raise SettingError(f"{name}: a value in {file_label} or the environment is unreadable") from None
        except ValueError:
            raise SettingError(
                f"{name} differs between {file_label} and the environment and neither is plainly stricter; "
                "set it in one place"
            ) from None
        values[name] = chosen
        source = file_label if chosen == in_file else "environment"
        notes.append(f"{name} differs in {file_label} and the environment; the stricter ({source}) holds")
    return Merged(values, notes)


def _same(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


def stricter_number(lower: bool) -> Stricter:
    """For a numeric policy setting: the lower (a threshold, a failure count) or the higher (a
    number of days remembered, seconds a circuit stays open) is the stricter."""

    def pick(a: str, b: str) -> str:
        try:
            x, y = float(a), float(b)
        except ValueError:
            raise SettingError("not a number") from None
        return a if (x <= y) == lower else b

    return pick


def refuse_if_different(name: str) -> Stricter:
    """For a structured policy value (quotas, pacing) with no single order: two differing values
    stop the process rather than pick one."""

    def pick(a: str, b: str) -> str:
        raise ValueError(name)

    return pick
