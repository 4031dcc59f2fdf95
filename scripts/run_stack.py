#!/usr/bin/env python3
"""Run the whole SafeClaw stack: a private Redis (unless REDIS_URL is given), the router, the
dashboard, and the agent with the console in the foreground. `./safeclaw` installs what is
missing, then runs this. `./safeclaw approvals|approve|deny|stop-posting|resume-posting|audit`
are the owner's control commands (scripts/control_cli.py); `./safeclaw mcp` runs the MCP server.

Ctrl-C or end of input stops them all, each by its own process id: SIGTERM, a bounded wait,
then SIGKILL. Messages of this script go to stderr; stdout belongs to the agent's console.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


class EarlyStop:
    """A Ctrl-C (or SIGTERM) before the stack's own handler is in place, even during the imports
    below: noted, never a traceback; the run then stops at its next step."""

    asked = False

    @classmethod
    def note(cls, _signum: int, _frame: FrameType | None) -> None:
        cls.asked = True


if __name__ == "__main__":
    for _signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signum, EarlyStop.note)

import redis  # noqa: E402

from protocol.atomic_file import write_atomically  # noqa: E402
from protocol.env_files import SettingError  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from scripts.control_cli import COMMANDS as CONTROL_COMMANDS  # noqa: E402
from scripts.control_cli import run as run_control  # noqa: E402
from scripts.stack_dashboard import DashboardPlan, plan_dashboard, wait_until_serving  # noqa: E402
from scripts.stack_env import (  # noqa: E402
    agent_environment,
    merged,
    read_env_file,
    router_environment,
    write_runtime_env,
)
from scripts.stack_redis import PrivateRedis, StackError  # noqa: E402

STOP_SECONDS = 10.0  # SIGTERM, then this long, then SIGKILL
DASHBOARD_GRACE_SECONDS = 0.5  # the console waits this long at most for the dashboard, once the router is up
ROUTER_READY_SECONDS = 60.0


def say(text: str) -> None:
    print(f"safeclaw: {text}", file=sys.stderr, flush=True)


def die_with_parent() -> None:
    """In the child: get SIGTERM if this runner dies without stopping us (Linux prctl)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def dashboard_child_setup() -> None:
    """In the dashboard's process: it starts at a lower priority, so on a small machine the router
    and the agent (the way to the console's prompt) get the cores first."""
    die_with_parent()
    with contextlib.suppress(OSError):
        os.nice(10)


def agent_child_setup() -> None:
    """In the agent's process: a Ctrl-C while Python itself starts would end in a traceback, so the
    agent starts with SIGINT ignored; its console takes Ctrl-C once it is up (and until then this
    runner stops it by SIGTERM)."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Stack:
    """The processes this run started, stopped in reverse order by their own pids."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.children: dict[str, subprocess.Popen[Any]] = {}
        self.interrupted = False

    def record(self, name: str, process: subprocess.Popen[Any]) -> None:
        self.children[name] = process
        pids = {n: p.pid for n, p in self.children.items()}
        data = (json.dumps(pids) + "\n").encode()
        write_atomically(self.run_dir / "pids.json", data, durable=False, mode=0o644)

    def stop(self, name: str) -> None:
        process = self.children.get(name)
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            say(f"{name} (pid {process.pid}) did not stop within {STOP_SECONDS:.0f}s; killing it")
            process.kill()
            process.wait(timeout=STOP_SECONDS)

    def stop_all(self) -> None:
        for name in reversed(list(self.children)):
            self.stop(name)


def lock_run_dir(run_dir: Path) -> IO[str]:
    run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle = (run_dir / "stack.lock").open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StackError(f"another ./safeclaw is running with {run_dir}; stop it first "
                         "(or give this one another folder with SAFECLAW_RUN_DIR)") from None
    return handle


def choose_llm(agent_env: dict[str, str]) -> str | None:
    """The provider to force on the agent, or None to keep the configured one."""
    from agent.config.settings import llm_settings_from_env
    from agent.errors import ConfigError
    from agent.llm.select import choose_provider

    try:
        llm = llm_settings_from_env(agent_env)
    except ConfigError as exc:
        raise StackError(str(exc)) from None
    configured = llm.provider
    provider, reason = choose_provider(llm)
    if reason:
        say(reason)
    return provider if provider != configured else None


def wait_for_router(router: subprocess.Popen[Any], agent_url: str, keys: Keys, router_id: str,
                    stopped: Callable[[], bool] = lambda: False) -> None:
    """Until the router's heartbeat is in Redis (read with the agent's user, as `status` does), or
    the owner stops the start."""
    client = redis.Redis.from_url(agent_url, socket_connect_timeout=2, socket_timeout=5)
    deadline = time.monotonic() + ROUTER_READY_SECONDS
    try:
        while client.get(keys.router_heartbeat(router_id)) is None and not stopped():
            if router.poll() is not None:
                raise StackError(f"the router exited with code {router.returncode}; see logs/router.log "
                                 "and logs/router.console.log")
            if time.monotonic() > deadline:
                raise StackError(f"the router sent no heartbeat within {ROUTER_READY_SECONDS:.0f}s; "
                                 "see logs/router.log")
            time.sleep(0.1)
    finally:
        client.close()


def redis_urls(args: argparse.Namespace, stack: Stack, keys: Keys, agent_file: dict[str, str],
               router_file: dict[str, str]) -> tuple[str, str, str | None, Callable[[], None]]:
    """(agent URL, router URL, control URL or None, wait until it answers): the given Redis, or a
    private one started now. The router may start while the private one gets ready (it needs a
    moment to import, Redis a moment to load)."""
    given = os.environ.get("REDIS_URL") or agent_file.get("REDIS_URL")
    if given:
        router_url = router_file.get("REDIS_URL") or os.environ.get("SAFECLAW_ROUTER_REDIS_URL")
        if not router_url:
            raise StackError("REDIS_URL is given, so the router needs its own login too: set "
                             "REDIS_URL=redis://router:PASSWORD@host:port/0 in router/.env")
        say("using the Redis given by REDIS_URL")
        control = (read_env_file(args.dashboard_env).get("REDIS_URL")
                   or os.environ.get("SAFECLAW_CONTROL_REDIS_URL"))
        return given, router_url, control, lambda: None
    private = PrivateRedis(args.run_dir, keys)
    private.start(die_with_parent, wait=False)
    assert private.process is not None
    stack.record("redis", private.process)

    def ready() -> None:
        private.wait_ready()
        users = "agent, router, control, mcp"
        say(f"private Redis on 127.0.0.1:{private.port} (users {users}; data in {private.dir})")

    write_runtime_env(args.run_dir / "mcp.env", {"REDIS_URL": private.url("mcp")})  # for ./safeclaw mcp
    return private.url("agent"), private.url("router"), private.url("control"), ready


def start_router(args: argparse.Namespace, stack: Stack, env: dict[str, str]) -> subprocess.Popen[Any]:
    log_dir = Path(env.get("SAFECLAW_LOG_DIR") or REPO_ROOT / "logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    env.setdefault("ROUTER_LOG_FILE", str(log_dir / "router.log"))
    with (log_dir / "router.console.log").open("ab") as console:
        router = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file",
             str(args.router_env)],
            cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=console, stderr=console,
            start_new_session=True, preexec_fn=die_with_parent,
        )
    stack.record("router", router)
    return router


@dataclass
class DashboardLaunch:
    plan: DashboardPlan
    process: subprocess.Popen[Any]
    log_dir: Path


def launch_dashboard(
    args: argparse.Namespace, stack: Stack, control_url: str | None
) -> DashboardLaunch | None:
    """Start the dashboard beside the stack (it gets ready while the router does); None when it
    is not started, said, never fatal."""
    if args.no_dashboard:
        return None
    if not control_url:
        say("no dashboard: with REDIS_URL given, it needs its own login (the control user): "
            "REDIS_URL=redis://control:PASSWORD@host:port/0 in dashboard/.env")
        return None
    plan = plan_dashboard(os.environ, read_env_file(args.dashboard_env), control_url, args.run_dir)
    write_runtime_env(args.run_dir / "dashboard.env", {"REDIS_URL": control_url})
    log_dir = Path(plan.env.get("SAFECLAW_LOG_DIR") or REPO_ROOT / "logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "dashboard.console.log").open("ab") as console:
        process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "dashboard" / "start_dashboard.py"), "--env-file",
             str(args.dashboard_env)],
            cwd=REPO_ROOT, env=plan.env, stdin=subprocess.DEVNULL, stdout=console, stderr=console,
            start_new_session=True, preexec_fn=dashboard_child_setup,
        )
    stack.record("dashboard", process)
    return DashboardLaunch(plan, process, log_dir)


def settle_dashboard(stack: Stack, launch: DashboardLaunch | None) -> None:
    """Say where the dashboard is once it serves, waiting for it a moment at most: the console does
    not wait for a page (on 2 cores its start competes with the router's). One still starting is
    said so and watched; one that does not come up is stopped (its log says why)."""
    if launch is None:
        return
    log_file = launch.log_dir / "dashboard.console.log"
    token = f"token in {launch.plan.token_file}" if launch.plan.token_file else "token: your DASHBOARD_TOKEN"

    def alive() -> bool:
        return launch.process.poll() is None

    if wait_until_serving(launch.plan, alive, DASHBOARD_GRACE_SECONDS):
        say(f"dashboard on {launch.plan.address} ({token})")
        return
    if not alive():
        say(f"the dashboard did not start; see {log_file}")
        stack.stop("dashboard")
        return
    say(f"dashboard on {launch.plan.address} ({token}), still starting; if it does not answer, see "
        f"{log_file}")

    def watch() -> None:
        if not wait_until_serving(launch.plan, alive):
            stack.stop("dashboard")

    threading.Thread(target=watch, name="dashboard-start", daemon=True).start()


class StartGate:
    """The agent starts with the router (its imports take as long as the router's start), and
    waits on this pipe before it shows anything: the console opens once the stack is up and its
    lines are printed. Closed without a word, it tells the agent to leave (the stack failed)."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()

    def env(self) -> dict[str, str]:
        return {"SAFECLAW_START_GATE": str(self.read_end)}

    def handed_over(self) -> None:
        os.close(self.read_end)  # the agent holds its own copy

    def open(self) -> None:
        with contextlib.suppress(OSError):  # an agent that already left
            os.write(self.write_end, b"go")
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.write_end)


def launch_agent(
    stack: Stack, command: list[str], env: dict[str, str], gate: StartGate
) -> subprocess.Popen[Any]:
    """The agent on this terminal, in the foreground group (a Ctrl-C reaches it directly); it shows
    nothing until the gate opens."""
    agent = subprocess.Popen(command, cwd=REPO_ROOT, env={**env, **gate.env()}, preexec_fn=agent_child_setup,
                             pass_fds=(gate.read_end,))
    gate.handed_over()
    stack.record("agent", agent)
    return agent


def wait_for_agent(stack: Stack, agent: subprocess.Popen[Any]) -> int:
    while True:
        try:
            code = agent.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            if stack.interrupted:
                stack.stop("agent")
    return 0 if stack.interrupted or code in (-signal.SIGINT, -signal.SIGTERM) else code


def agent_command(args: argparse.Namespace, command: str = "run") -> list[str]:
    cmd = [sys.executable, str(REPO_ROOT / "agent" / "start_agent.py"), command]
    for channel in args.channel or []:
        cmd += ["--channel", channel]
    return cmd + (["--verbose"] if args.verbose else [])


def run(args: argparse.Namespace) -> int:
    from agent.channels.display import TerminalSettings

    stack = Stack(args.run_dir)
    lock = lock_run_dir(args.run_dir)
    terminal = TerminalSettings(sys.stdin)  # put back at the end, whatever became of the agent

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        stack.interrupted = True

    previous: list[Callable[..., Any] | int | None] = [signal.signal(s, interrupt)
                                                       for s in (signal.SIGINT, signal.SIGTERM)]
    stack.interrupted = stack.interrupted or EarlyStop.asked
    console_open = False
    try:
        if stack.interrupted:
            return 0
        agent_file, router_file = read_env_file(args.agent_env), read_env_file(args.router_env)
        keys = Keys.from_env(os.environ)
        agent_url, router_url, control_url, redis_ready = redis_urls(args, stack, keys, agent_file,
                                                                     router_file)
        router_env, dry_run = router_environment(os.environ, router_file, router_url)
        router = start_router(args, stack, router_env)
        redis_ready()
        if stack.interrupted:
            return 0
        dashboard = launch_dashboard(args, stack, control_url)
        provider = choose_llm(merged(agent_file, os.environ))
        agent_env = agent_environment(os.environ, agent_url, provider)
        write_runtime_env(args.run_dir / "agent.env", {"REDIS_URL": agent_url})
        write_runtime_env(args.run_dir / "router.env", {"REDIS_URL": router_url})
        gate = StartGate()
        try:
            agent = launch_agent(stack, agent_command(args), agent_env, gate)
            router_id = merged(router_file, router_env)["ROUTER_ID"]
            wait_for_router(router, agent_url, keys, router_id, lambda: stack.interrupted)
            if stack.interrupted:
                return 0
            data_dir = merged(router_file, router_env).get("ROUTER_DATA_DIR") or REPO_ROOT / "router"
            outbox = Path(data_dir) / "outbox.jsonl"
            dry = f"; dry run: posts are recorded in {outbox}" if dry_run else ""
            say(f"router {router_id} is up{dry}")
            settle_dashboard(stack, dashboard)
            if stack.interrupted:
                return 0
            gate.open()
            console_open = True
        finally:
            gate.close()
        return wait_for_agent(stack, agent)
    finally:
        stack.stop_all()
        terminal.restore()
        if stack.interrupted and not console_open:  # the console says Bye itself; else end the ^C line
            sys.stderr.write("\n")
            sys.stderr.flush()
        for signum, handler in zip((signal.SIGINT, signal.SIGTERM), previous, strict=True):
            signal.signal(signum, handler)
        lock.close()


def health(args: argparse.Namespace) -> int:
    """`status` / `doctor` of the agent, reaching the running private stack when there is one."""
    env = dict(os.environ)
    runtime = read_env_file(args.run_dir / "agent.env")
    if not env.get("REDIS_URL") and not read_env_file(args.agent_env).get("REDIS_URL") and runtime:
        env["REDIS_URL"] = runtime["REDIS_URL"]
    return subprocess.call(agent_command(args, args.command), cwd=REPO_ROOT, env=env)


# Every command of ./safeclaw (the script runs some itself, this runner the rest), for --help
# and for a misspelt one.
COMMANDS_HELP = """commands:
  (none) / run        Redis + router + dashboard + agent, the console in the foreground
  status              while it runs: the LLM the agent uses, Redis, routers, kill switch, dry run, queue
  doctor              what is missing or wrong, one line each, and how to fix it
  install             only install (what `make install` runs); fails if anything is missing
  approvals           commands waiting for your decision; approve ID / deny ID
  stop-posting        the live kill switch (resume-posting lifts it)
  audit verify        check the audit log's hash chain
  rules [accept N]    the agent's rule proposals
  agent ARGS          the agent alone (./safeclaw agent --help)
  router ARGS         the router alone (./safeclaw router --help)
  social              the one-shot tool: one JSON command on stdin, one JSON answer
  mcp                 the MCP server on stdio
  python ARGS         the installed Python (e.g. ./safeclaw python -m router.catalogue)
  compose-init        Redis users and passwords for docker compose

environment: REDIS_URL (use that Redis; the router's own login goes in router/.env), SAFECLAW_RUN_DIR
(default .run/: passwords, Redis data, pids), SAFECLAW_LLM_PROVIDER. Platform credentials go in
router/.env only; see .env.example."""
ALL_COMMANDS = ("run", "status", "doctor", "install", "approvals", "approve", "deny", "stop-posting",
                "resume-posting", "audit", "rules", "agent", "router", "social", "mcp", "python",
                "compose-init")


def unknown_command(word: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, ALL_COMMANDS, n=1)
    hint = f"; did you mean ./safeclaw {close[0]}?" if close else ""
    return f"unknown command {word!r}{hint} (./safeclaw --help lists them)"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="./safeclaw",
        description="Run SafeClaw: a private Redis, the router, the dashboard and the agent (console).",
        epilog=COMMANDS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", nargs="?", default="run", choices=["run", "status", "doctor"],
                        help="run the stack (default), or status / doctor of the running one; the other "
                             "commands are listed below")
    parser.add_argument("--no-dashboard", action="store_true", help="run without the dashboard")
    parser.add_argument("--channel", action="append", metavar="NAME", help="agent channel (repeatable)")
    parser.add_argument("--verbose", "-v", action="store_true", help="the agent logs INFO to stderr too")
    parser.add_argument("--run-dir", type=Path, help="passwords, Redis data and pids (default .run/)",
                        default=Path(os.environ.get("SAFECLAW_RUN_DIR") or REPO_ROOT / ".run"))
    # Other dotenv files than agent/.env and router/.env: for tests.
    parser.add_argument("--agent-env", type=Path, default=REPO_ROOT / "agent" / ".env",
                        help=argparse.SUPPRESS)
    parser.add_argument("--router-env", type=Path, default=REPO_ROOT / "router" / ".env",
                        help=argparse.SUPPRESS)
    parser.add_argument("--dashboard-env", type=Path, default=REPO_ROOT / "dashboard" / ".env",
                        help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in CONTROL_COMMANDS:
        return control(argv)
    if argv and argv[0] == "mcp":
        return mcp(argv[1:])
    if argv and not argv[0].startswith("-") and argv[0] not in ("run", "status", "doctor"):
        say(unknown_command(argv[0]))
        return 2
    args = parse_args(argv)
    try:
        return health(args) if args.command in ("status", "doctor") else run(args)
    except (StackError, SettingError) as exc:  # a settings file that cannot be read names its line
        say(str(exc))
        return 1


def control(argv: list[str]) -> int:
    """`./safeclaw approvals|approve|deny|stop-posting|resume-posting|audit verify`."""
    run_dir = Path(os.environ.get("SAFECLAW_RUN_DIR") or REPO_ROOT / ".run")
    return run_control(argv, run_dir, REPO_ROOT / "dashboard" / ".env", REPO_ROOT / "router" / ".env")


def mcp(argv: list[str], environ: dict[str, str] | None = None) -> int:
    """`./safeclaw mcp [--read-only]`: the MCP server (`python -m router.mcp`) on stdio. It reaches the
    router with REDIS_URL (the `mcp` user) if given, else the running stack's (`<run dir>/mcp.env`),
    else it runs each call through the one-shot tool. stdout is the protocol's: nothing else is printed."""
    env = dict(os.environ if environ is None else environ)
    run_dir = Path(env.get("SAFECLAW_RUN_DIR") or REPO_ROOT / ".run")
    if not env.get("REDIS_URL"):
        stack_url = read_env_file(run_dir / "mcp.env").get("REDIS_URL")
        if stack_url:
            env["REDIS_URL"] = stack_url
    command = [sys.executable, "-m", "router.mcp", *argv]
    return subprocess.call(command, cwd=REPO_ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
