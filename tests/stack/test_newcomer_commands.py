"""What a newcomer types at the shell besides the console, and what a fresh machine may be like:
`./safeclaw help`, a checkout it cannot write to, a terminal whose encoding is not UTF-8, the
owner's commands while SafeClaw is not running. Each answer is a plain line, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.stack_redis import free_port
from tests.stack.stack_helpers import REPO_ROOT, START_AGENT


def safeclaw(*argv: str, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SAFECLAW_SKIP_INSTALL": "1", "SAFECLAW_RUN_DIR": str(tmp_path / "run"), **extra}
    return subprocess.run(["./safeclaw", *argv], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_help_as_a_word_is_the_help(tmp_path):
    done = safeclaw("help", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\n  status" in done.stdout and "\n  doctor" in done.stdout
    assert done.stdout == safeclaw("--help", tmp_path=tmp_path).stdout
    misspelt = safeclaw("hlep", tmp_path=tmp_path)
    assert misspelt.returncode == 2 and "did you mean ./safeclaw help?" in misspelt.stderr
    assert not (tmp_path / "run").exists()


def test_a_folder_it_cannot_write_is_named_with_the_fix_not_a_traceback(tmp_path):
    """A read-only checkout: opening the run folder's lock file raised OSError out of the runner."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the run folder's parent should be", encoding="utf-8")
    run_dir = blocker / "run"
    done = subprocess.run(["./safeclaw"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL,
                          env={**os.environ, "SAFECLAW_SKIP_INSTALL": "1", "SAFECLAW_RUN_DIR": str(run_dir)})
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("safeclaw: cannot write ") and str(blocker) in line, line
    assert "SAFECLAW_RUN_DIR" in line, line


def agent_cli(command: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUTER_", "BSKY_"))}
    env.update(SAFECLAW_LLM_PROVIDER="scripted", REMOTE_BROWSER_SERVER=f"http://127.0.0.1:{free_port()}",
               **extra)
    return subprocess.run([sys.executable, str(START_AGENT), command], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=60, encoding="latin-1")


def test_status_and_doctor_print_in_a_terminal_that_is_not_utf8():
    """In a Latin-1 locale (Python's stdout then encodes Latin-1) status died on the first ✓."""
    for command in ("status", "doctor"):
        done = agent_cli(command, PYTHONIOENCODING="latin-1")
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 1  # no REDIS_URL: one failed check, said as for any terminal
        lines = done.stdout.splitlines()
        assert any(line.startswith("x Redis: REDIS_URL is not set") for line in lines), done.stdout
        assert any(line.startswith("+ ") for line in lines), done.stdout


def test_the_owners_commands_while_safeclaw_is_not_running_say_so(tmp_path):
    """Before: `Redis: ConnectionError: Error 111 connecting to 127.0.0.1:…; is the stack running?`"""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    port = free_port()
    (run_dir / "dashboard.env").write_text(f"REDIS_URL=redis://control:pw@127.0.0.1:{port}/0\n")
    for command in ("approvals", "stop-posting", "resume-posting", "approve"):
        argv = [command, "0123456789abcdef0123456789abcdef"] if command == "approve" else [command]
        done = safeclaw(*argv, tmp_path=tmp_path)
        assert done.returncode == 1, done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("safeclaw: SafeClaw is not running"), line
        assert "start it with ./safeclaw" in line, line
        assert "Error 111" not in line and "ConnectionError" not in line, line
    stopped = safeclaw("stop-posting", tmp_path=tmp_path).stderr
    assert "ROUTER_KILL_SWITCH=true in router/.env" in stopped  # how to start with posting stopped


@pytest.mark.slow  # nine runs of ./safeclaw: near 5 s on a busy machine
def test_the_words_a_person_tries_first_get_an_answer_not_a_wrong_guess(tmp_path):
    """`./safeclaw start` and `./safeclaw restart` were answered "did you mean ./safeclaw status?";
    `stop` and `logs` only with "unknown command"."""
    start = safeclaw("start", "--help", tmp_path=tmp_path)
    assert start.returncode == 0 and start.stdout == safeclaw("--help", tmp_path=tmp_path).stdout
    answers = {"stop": "Ctrl-D", "quit": "Ctrl-D", "restart": "Ctrl-D", "logs": "logs/",
               "config": "./safeclaw agent config", "version": "git log"}
    for word, expected in answers.items():
        done = safeclaw(word, tmp_path=tmp_path)
        assert done.returncode == 2, (word, done.stderr)
        [line] = done.stderr.strip().splitlines()
        assert expected in line and "did you mean ./safeclaw status" not in line, (word, line)
    assert not (tmp_path / "run").exists()


def test_paths_in_the_start_lines_are_short_inside_the_folder_and_whole_outside(tmp_path):
    """In a 40-column terminal "/home/.../safeclaw/router/outbox.jsonl" broke at the edge."""
    from scripts.stack_processes import shown_path

    assert shown_path(REPO_ROOT / "router" / "outbox.jsonl") == "router/outbox.jsonl"
    assert shown_path(REPO_ROOT / ".run" / "dashboard.token") == ".run/dashboard.token"
    assert shown_path(tmp_path / "outbox.jsonl") == str(tmp_path / "outbox.jsonl")


def test_a_second_start_while_one_runs_says_where_the_first_one_is(tmp_path):
    """"another ./safeclaw is running with /home/.../.run; stop it first": which one, and how?"""
    import fcntl

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with (run_dir / "stack.lock").open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = safeclaw(tmp_path=tmp_path)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("safeclaw: SafeClaw is already running (in another terminal)"), line
    assert "Ctrl-D" in line and "./safeclaw status" in line and "SAFECLAW_RUN_DIR" in line, line
