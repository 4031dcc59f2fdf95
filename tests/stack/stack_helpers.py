"""Helpers of the stack tests: run `scripts/run_stack.py` and check no process it started is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pexpect

from scripts.stack_redis import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_STACK = REPO_ROOT / "scripts" / "run_stack.py"
START_AGENT = REPO_ROOT / "agent" / "start_agent.py"
POST_TEXT = "Hello from the SafeClaw stack test"
CREATE_POST_REPLY = (
    "I will post it.<tool_code>[{\"name\": \"CREATE_POST\", \"params\": "
    f"{{\"platform\": \"bsky\", \"text\": \"{POST_TEXT}\"}}}}]</tool_code>"
)
FINAL_REPLY = "Done, I asked the router to post it."
PROMPT = "shell-ready$ "  # the interactive shell's, in the terminal tests


@dataclass
class StackRun:
    returncode: int
    stdout: str
    stderr: str
    pids: dict[str, int]
    dirs: dict[str, Path]

    def outbox(self) -> list[dict]:
        path = self.dirs["data"] / "outbox.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def artifact_text(self) -> str:
        path = self.dirs["workspace"] / "artifact.json"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def stack_dirs(tmp_path: Path) -> dict[str, Path]:
    dirs = {name: tmp_path / name for name in ("run", "data", "logs")}
    dirs["workspace"] = Path(os.environ["SAFECLAW_WORKSPACE"])  # the autouse fixture's tmp workspace
    return dirs


def stack_env(tmp_path: Path, replies: list[str], **extra: str) -> dict[str, str]:
    replies_file = tmp_path / "replies.json"
    replies_file.write_text(json.dumps(replies), encoding="utf-8")
    dirs = stack_dirs(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUTER_", "BSKY_", "MASTODON_"))}
    env.update(
        SAFECLAW_RUN_DIR=str(dirs["run"]), SAFECLAW_LOG_DIR=str(dirs["logs"]),
        ROUTER_DATA_DIR=str(dirs["data"]),
        SAFECLAW_LLM_PROVIDER="scripted", SAFECLAW_SCRIPTED_REPLIES=str(replies_file),
        DASHBOARD_PORT=str(free_port()), **extra,
    )
    return env


def run_stack(tmp_path: Path, env: dict[str, str], stdin: str, *args: str, timeout: float = 120) -> StackRun:
    """Run the stack once with `stdin` piped (end of input ends it) and private env files."""
    agent_env, router_env = tmp_path / "agent.env", tmp_path / "router.env"
    dashboard_env = tmp_path / "dashboard.env"
    for path in (agent_env, router_env, dashboard_env):
        path.touch()
    command = [sys.executable, str(RUN_STACK), *args, "--agent-env", str(agent_env),
               "--router-env", str(router_env), "--dashboard-env", str(dashboard_env)]
    proc = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                          timeout=timeout)
    pids_file = tmp_path / "run" / "pids.json"
    pids = json.loads(pids_file.read_text()) if pids_file.exists() else {}
    return StackRun(proc.returncode, proc.stdout, proc.stderr, pids, stack_dirs(tmp_path))


def alive(pid: int) -> bool:
    """True while `pid` is a live process (a zombie waiting for its reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "?")
    return state not in ("Z", "X")


def interactive_shell(env: dict[str, str]) -> pexpect.spawn:
    shell_env = {**env, "PS1": PROMPT, "TERM": "dumb"}
    child = pexpect.spawn("bash", ["--norc", "--noprofile", "--noediting", "-i"], env=shell_env,
                          cwd=str(REPO_ROOT), encoding="utf-8", timeout=90, dimensions=(24, 200))
    child.expect_exact(PROMPT)
    return child


def processes_naming(marker: str) -> list[int]:
    """Live processes whose command line or environment names `marker` (this test's folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            seen = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in seen and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def stack_arguments(tmp_path: Path) -> str:
    for name in ("agent.env", "router.env", "dashboard.env"):
        (tmp_path / name).touch()
    return (f"--no-dashboard --agent-env {tmp_path / 'agent.env'} --router-env {tmp_path / 'router.env'}"
            f" --dashboard-env {tmp_path / 'dashboard.env'}")
