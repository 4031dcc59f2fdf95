"""`./safeclaw` on an installed machine runs no child process before it becomes the program: while
bash waits for a child, a Ctrl-C that comes as the child ends (or that crashes a Python in its start,
"Fatal Python error") is taken as the child's own, and the start goes on past its trap. Every
command the script could call is a logging stand-in on PATH here; the venv is a stand-in too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.stack.stack_helpers import REPO_ROOT

LOGGED = ("env", "readlink", "dirname", "grep", "python3", "cat", "id", "touch")
SYSTEM_PROGRAMS = ("redis-server", "chromium", "chromedriver", "docker-compose")


def stand_ins(tmp_path: Path, version: str = "3.11.7", env_stamp: bool = True) -> dict[str, str]:
    bin_dir, venv, log = tmp_path / "bin", tmp_path / "venv", tmp_path / "calls.log"
    bin_dir.mkdir()
    (venv / "bin").mkdir(parents=True)
    for name in LOGGED:
        real = "/usr/bin/" + name if Path("/usr/bin/" + name).exists() else "/bin/" + name
        target = bin_dir / name
        target.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexec {real} "$@"\n')
        target.chmod(0o755)
    for name in SYSTEM_PROGRAMS:  # found by `command -v`, never run
        (bin_dir / name).write_text("#!/bin/sh\nexit 1\n")
        (bin_dir / name).chmod(0o755)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "venv-python $*" >> "{log}"\n')
    python.chmod(0o755)
    (venv / "pyvenv.cfg").write_text(f"home = /nowhere\ninclude-system-site-packages = false\n"
                                     f"version = {version}\nexecutable = /nowhere/python3\n")
    for stamp in (".installed", ".installed-local", *([".env-blocks-signals"] if env_stamp else [])):
        (venv / stamp).touch()
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "VENV": str(venv),
            "PYTHON": str(bin_dir / "python3")}


def start(env: dict[str, str], *argv: str, skip_install: bool = True) -> tuple[subprocess.CompletedProcess, list]:
    env = {**env, **({"SAFECLAW_SKIP_INSTALL": "1"} if skip_install else {})}
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), *argv], cwd=env["HOME"], env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    log = Path(env["HOME"]) / "calls.log"
    return done, log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("skip_install", [True, False])
def test_an_installed_start_runs_nothing_before_the_program(tmp_path, skip_install):
    env = stand_ins(tmp_path)
    done, calls = start(env, "--stand-in", skip_install=skip_install)
    assert done.returncode == 0, done.stderr
    python = f"{env['VENV']}/bin/python"
    assert calls == [f"env --block-signal=INT {python} scripts/run_stack.py --stand-in",
                     "venv-python scripts/run_stack.py --stand-in"]


def test_env_is_asked_once_and_the_answer_kept(tmp_path):
    env = stand_ins(tmp_path, env_stamp=False)
    _, first = start(env)
    assert any(call.startswith("env --help") for call in first), first
    (tmp_path / "calls.log").unlink()
    _, second = start(env)
    assert not [call for call in second if call.startswith(("env --help", "grep"))], second
    assert (Path(env["VENV"]) / ".env-blocks-signals").exists()


@pytest.mark.parametrize("version", ["3.10.12", "2.7.18", "garbled"])
def test_a_venv_python_too_old_falls_back_to_python3_and_says_what_is_needed(tmp_path, version):
    env = stand_ins(tmp_path, version=version)
    env["PYTHON"] = "/nonexistent/python3"
    done, _ = start(env)
    assert done.returncode == 1
    assert "Python 3.11 or newer is needed" in done.stderr, done.stderr


def test_a_symlink_to_the_script_runs_it_from_its_own_folder(tmp_path):
    link = tmp_path / "safeclaw"
    os.symlink(REPO_ROOT / "safeclaw", link)
    done = subprocess.run([str(link), "--help"], cwd="/", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (REPO_ROOT / "scripts" / "help.txt").read_text(encoding="utf-8")
