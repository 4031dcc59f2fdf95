"""Every command the README and the docs show works as written after `./safeclaw install` (issue 21,
item 9: `python router/start_router.py --help` failed with ModuleNotFoundError unless run with the
venv's Python). Each is run in its harmless form (`--help`, `make -n`) with `python` and `python3`
on the PATH being a bare Python that has none of SafeClaw's packages, as on a fresh machine."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stack.stack_helpers import REPO_ROOT

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
OURS = ("./safeclaw", "python", "python3", "make")
PLACEHOLDER = re.compile(r"[<…]|\.\.\.")
FENCE = re.compile(r"^```")
INLINE = re.compile(r"`((?:\./safeclaw|python3?|make) [^`]*|\./safeclaw)`")


def shown_lines(path: Path) -> list[str]:
    """Command lines of a page: fenced blocks, indented blocks, and inline code that is a command."""
    found, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if fenced or (line.startswith("    ") and not line.lstrip().startswith(("-", "|", "*"))):
            found.append(line.strip())
        else:
            found += INLINE.findall(line)
    return [line for line in found if line and not line.startswith("#")]


def our_commands(line: str) -> list[list[str]]:
    """The parts of a line that run one of our programs, as words (env assignments dropped)."""
    line = re.split(r"\s#\s", line, maxsplit=1)[0]
    commands = []
    for part in re.split(r"&&|\|", line):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            words = words[1:]
        if words and words[0] in OURS:
            commands.append(words)
    return commands


def harmless(words: list[str]) -> list[str]:
    """The command cut before its first placeholder, asking for its help (make: only say what it
    would run)."""
    kept = []
    for word in words:
        if PLACEHOLDER.search(word):
            break
        kept.append(word)
    if kept[0] == "make":
        return ["make", "-n", *kept[1:]]
    return [*kept, "--help"]


def shown_commands() -> list[tuple[str, list[str]]]:
    seen: dict[str, tuple[str, list[str]]] = {}
    for path in DOCS:
        for line in shown_lines(path):
            for words in our_commands(line):
                command = harmless(words)
                seen.setdefault(" ".join(command), (f"{path.name}: {line}", command))
    return sorted(seen.values(), key=lambda item: item[0])


def test_the_pages_show_the_commands_a_newcomer_types():
    shown = {" ".join(command) for _, command in shown_commands()}
    for expected in ("./safeclaw --help", "./safeclaw agent config telegram --help",
                     "./safeclaw router --help --help", "./safeclaw social --help", "make -n test"):
        assert expected in shown, sorted(shown)


@pytest.fixture(scope="module")
def fresh_machine_path(tmp_path_factory) -> str:
    """A PATH whose `python` and `python3` have no SafeClaw package (a venv without pip)."""
    bare = tmp_path_factory.mktemp("bare-python")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    probe = subprocess.run([str(bare / "bin" / "python"), "-c", "import redis"], capture_output=True)
    assert probe.returncode != 0, "the bare Python must not have SafeClaw's packages"
    return f"{bare / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.mark.slow
@pytest.mark.parametrize(("where", "command"), shown_commands(), ids=[w for w, _ in shown_commands()])
def test_each_command_shown_works_as_written(where, command, fresh_machine_path, tmp_path):
    env = {**os.environ, "PATH": fresh_machine_path, "SAFECLAW_SKIP_INSTALL": "1",
           "SAFECLAW_RUN_DIR": str(tmp_path / "run")}
    env.pop("SAFECLAW_INSTALLED_PYTHON", None)
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{where}\n$ {' '.join(command)}\n{done.stdout}{done.stderr}"
    assert "Traceback" not in done.stdout + done.stderr, where
    assert done.stdout.strip(), f"{where}: no help printed"


def test_a_misspelt_command_is_named_with_the_closest_one_and_nothing_starts(tmp_path):
    env = {**os.environ, "SAFECLAW_SKIP_INSTALL": "1", "SAFECLAW_RUN_DIR": str(tmp_path / "run")}
    done = subprocess.run(["./safeclaw", "statsu"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "unknown command 'statsu'; did you mean ./safeclaw status?" in done.stderr
    assert not (tmp_path / "run").exists()  # no Redis, no router was started
    listed = subprocess.run(["./safeclaw", "--help"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                            timeout=60).stdout
    for command in ("status", "doctor", "install", "approvals", "agent ARGS", "router ARGS", "social", "python"):
        assert f"\n  {command}" in listed, command
