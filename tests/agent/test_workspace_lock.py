"""Issue 19, item 1: one agent per workspace. Two agents started on one workspace both ran (of 60
confirmed memory writes 50 reached the disk) and two `autonomy once` at the same moment both acted.
The second start refuses with one line naming the other's pid; `autonomy once` skips."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from agent.workspace.lock import WorkspaceBusy, WorkspaceLock
from tests.agent.test_start_agent import REPO, run_agent

HOLD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    from agent.workspace.lock import WorkspaceLock
    lock = WorkspaceLock(Path({root!r})).acquire()
    print("held", flush=True)
    time.sleep(60)
    """
)


@pytest.fixture
def other_agent(workspace):
    """Another process holding the workspace, as a running agent does."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD.format(repo=str(REPO), root=str(workspace.root))],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_a_second_agent_on_the_same_workspace_refuses_naming_the_other_pid(workspace, other_agent):
    done = run_agent(stdin="hello\n", env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and f"pid {other_agent.pid}" in done.stderr
    assert done.stdout == ""  # it answered nothing


def test_autonomy_once_skips_while_the_agent_holds_the_workspace(workspace, other_agent):
    done = run_agent("autonomy", "once", env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert done.returncode == 0, done.stderr
    assert "skipped" in done.stdout and str(other_agent.pid) in done.stdout


def test_the_lock_is_free_again_when_its_holder_dies(workspace, other_agent):
    with pytest.raises(WorkspaceBusy):
        WorkspaceLock(workspace.root).acquire()
    other_agent.kill()
    other_agent.wait()
    with WorkspaceLock(workspace.root) as lock:
        assert lock.holder() == os.getpid()


def test_the_lock_file_does_not_show_in_git_status(tmp_path):
    """`workspace/.agent.lock` showed as an untracked file in `git status` of a fresh clone."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    (clone / ".gitignore").write_text((REPO / ".gitignore").read_text(encoding="utf-8"), encoding="utf-8")
    (clone / "workspace").mkdir()
    lock = WorkspaceLock(clone / "workspace").acquire()
    try:
        assert (clone / "workspace" / ".agent.lock").exists()
        shown = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                               capture_output=True, text=True, check=True).stdout
    finally:
        lock.release()
    assert shown.splitlines() == ["?? .gitignore"], shown
