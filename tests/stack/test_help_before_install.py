"""`./safeclaw --help` on a fresh clone, before anything is installed: the shell script answers it
itself (scripts/help.txt), naming every command it and the runner accept, never a traceback."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from scripts.control_names import COMMANDS as CONTROL_COMMANDS
from scripts.run_stack import ALL_COMMANDS
from tests.stack.stack_helpers import REPO_ROOT

# Case labels of the shell script's dispatch (`  agent) ...`, `  run|start|status|doctor)`).
CASE_LABEL = re.compile(r"^\s+([a-z][a-z|-]*)\)", re.MULTILINE)


def script_commands() -> set[str]:
    labels = CASE_LABEL.findall((REPO_ROOT / "safeclaw").read_text(encoding="utf-8"))
    return {word for label in labels for word in label.split("|")}


def pythons_without_the_venv() -> list[str]:
    """A Python that is not there at all, and the system's (which has no redis package)."""
    found = shutil.which("python3", path="/usr/bin:/bin")
    return ["/nonexistent/python3", *([found] if found else [])]


@pytest.mark.parametrize("python", pythons_without_the_venv())
@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["help"], ["start", "--help"]])
def test_help_needs_nothing_installed(tmp_path, python, argv):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "VENV": str(tmp_path / "no-venv"), "PYTHON": python}
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and not done.stderr
    assert not (tmp_path / "no-venv").exists()  # nothing was installed for the help
    named = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")}
    every = script_commands() | set(CONTROL_COMMANDS) | {"run", "status", "doctor"}
    assert every <= named, every - named


def test_each_command_has_a_one_line_description():
    block = (REPO_ROOT / "scripts" / "help.txt").read_text(encoding="utf-8").split("\ncommands:\n")[1]
    for line in block.split("\n\n")[0].splitlines():
        assert re.match(r"^  \S.{1,18}\s{2,}\w", line), line
    assert set(ALL_COMMANDS) >= script_commands() | set(CONTROL_COMMANDS)


def test_the_runner_prints_the_same_help():
    env = {**os.environ, "SAFECLAW_SKIP_INSTALL": "1"}
    via_python = subprocess.run([sys.executable, "scripts/run_stack.py", "--help"],
                                cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert via_python.returncode == 0, via_python.stderr
    assert via_python.stdout == (REPO_ROOT / "scripts" / "help.txt").read_text(encoding="utf-8")
