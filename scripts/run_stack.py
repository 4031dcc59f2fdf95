#!/usr/bin/env python3
"""Run the whole SafeClaw stack: a private Redis (unless REDIS_URL is given), the router, the
dashboard, and the agent with the console in the foreground. `./safeclaw` installs what is
missing, then runs this. `./safeclaw approvals|approve|deny|stop-posting|resume-posting|audit`
are the owner's control commands (scripts/control_cli.py); `./safeclaw mcp` runs the MCP server.

Ctrl-C during the start, end of input, or the agent leaving (Ctrl-C or Ctrl-D at its prompt; a
Ctrl-C during a reply only stops that reply) stops them all, each by its own process id: SIGTERM,
a bounded wait, then SIGKILL. Messages of this script go to stderr; stdout belongs to the agent's console.
Each part starts in its own module (stack_redis, stack_router, stack_dashboard, stack_agent);
stack_processes keeps what was started and stops it.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from protocol.ctrl_c import INTERRUPTED, interrupted, leave_on_ctrl_c, stop_signals  # noqa: E402

if __name__ == "__main__":
    leave_on_ctrl_c()  # until the run's own handler is in place: quietly, status 130, nothing started

import argparse  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
from collections.abc import Callable  # noqa: E402
from types import FrameType  # noqa: E402
from typing import Any  # noqa: E402

from protocol.env_files import SettingError  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from scripts.control_names import COMMANDS as CONTROL_COMMANDS  # noqa: E402
from scripts.stack_agent import StartGate, agent_command, choose_llm, launch_agent, wait_for_agent  # noqa: E402
from scripts.stack_dashboard import launch_dashboard, settle_dashboard  # noqa: E402
from scripts.stack_env import (  # noqa: E402
    agent_environment,
    merged,
    read_env_file,
    router_environment,
    write_runtime_env,
)
from scripts.stack_processes import (  # noqa: E402
    Stack,
    StackError,
    lock_run_dir,
    run_in_foreground,
    say,
    shown_path,
)
from scripts.stack_redis import redis_urls  # noqa: E402
from scripts.stack_router import start_router, wait_for_router  # noqa: E402


def run(args: argparse.Namespace) -> int:
    from agent.channels.display import TerminalSettings

    stack = Stack(args.run_dir)
    lock = lock_run_dir(args.run_dir)
    terminal = TerminalSettings(sys.stdin)  # put back at the end, whatever became of the agent

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        stack.interrupted = True

    stopping = stop_signals()
    previous: list[Callable[..., Any] | int | None] = [signal.signal(s, interrupt) for s in stopping]
    console_open = False
    try:
        agent_file, router_file = read_env_file(args.agent_env), read_env_file(args.router_env)
        keys = Keys.from_env(os.environ)
        agent_url, router_url, control_url, redis_ready = redis_urls(args, stack, keys, agent_file,
                                                                     router_file)
        router_env, dry_run = router_environment(os.environ, router_file, router_url)
        router = start_router(args, stack, router_env)
        redis_ready()
        if stack.interrupted:
            return INTERRUPTED
        dashboard = launch_dashboard(args, stack, control_url)
        provider = choose_llm(merged(agent_file, os.environ))
        agent_env = agent_environment(os.environ, agent_url, provider)
        write_runtime_env(args.run_dir / "agent.env", {"REDIS_URL": agent_url})
        write_runtime_env(args.run_dir / "router.env", {"REDIS_URL": router_url})
        gate = StartGate()
        try:
            agent = launch_agent(stack, agent_command(args), agent_env, gate)
            router_id = merged(router_file, router_env)["ROUTER_ID"]
            wait_for_router(router, agent_url, keys, router_id,
                            lambda: stack.interrupted or agent.poll() is not None)
            if stack.interrupted:
                return INTERRUPTED
            if agent.poll() is not None:  # it said why on this terminal
                return agent_stopped(agent.returncode)
            data_dir = merged(router_file, router_env).get("ROUTER_DATA_DIR") or REPO_ROOT / "router"
            outbox = Path(data_dir) / "outbox.jsonl"
            dry = f"; dry run: posts are recorded in {shown_path(outbox)}, not sent" if dry_run else ""
            say(f"router {router_id} is up{dry}")
            settle_dashboard(stack, dashboard)
            if stack.interrupted:
                return INTERRUPTED
            gate.open()
            console_open = True
            # From here Ctrl-C is the console's: it stops a reply, or at the prompt the agent leaves
            # (and the stack with it). SIGTERM and a closed terminal still stop the stack from here.
            signal.signal(signal.SIGINT, ignore_ctrl_c)
        finally:
            gate.close()
        code = wait_for_agent(stack, agent)
        if stack.interrupted and agent.returncode not in (0, INTERRUPTED):
            console_open = False  # stopped before its console took Ctrl-C: nobody ended the ^C line
            return INTERRUPTED
        return agent_stopped(code) if code else 0
    finally:
        stack.stop_all()
        terminal.restore()
        for signum, handler in zip(stopping, previous, strict=True):
            signal.signal(signum, handler)
        if stack.interrupted and not console_open:  # the console says Bye itself; else end the ^C line
            interrupted()
        lock.close()


def ignore_ctrl_c(_signum: int, _frame: FrameType | None) -> None:
    """The runner's Ctrl-C once the console is open: the agent (in the same terminal) takes it."""


def agent_stopped(code: int) -> int:
    """The last line when the agent ended with an error: the rest of the stack ends with it."""
    say(f"the agent stopped (exit code {code}; its reason is above), so SafeClaw stopped too")
    return code or 1


def health(args: argparse.Namespace) -> int:
    """`status` / `doctor` of the agent, reaching the running private stack when there is one."""
    env = dict(os.environ)
    runtime = read_env_file(args.run_dir / "agent.env")
    if not env.get("REDIS_URL") and not read_env_file(args.agent_env).get("REDIS_URL") and runtime:
        env["REDIS_URL"] = runtime["REDIS_URL"]
    return run_in_foreground(agent_command(args, args.command), cwd=REPO_ROOT, env=env)


# Every command of ./safeclaw, for --help and for a misspelt one: scripts/help.txt, which the shell
# script prints itself, so the help works before anything is installed.
HELP_TEXT = (REPO_ROOT / "scripts" / "help.txt").read_text(encoding="utf-8")


def listed_commands(help_text: str) -> tuple[str, ...]:
    """The first word of each line of the help's `commands:` block."""
    block = help_text.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return tuple(line.split()[0] for line in block.splitlines() if line.strip())


ALL_COMMANDS = listed_commands(HELP_TEXT)


# What the words people try first mean here.
LEAVE = "SafeClaw stops with Ctrl-D (or Ctrl-C) in the terminal it runs in"
TRIED_FIRST = {
    "stop": f"{LEAVE}; ./safeclaw stop-posting stops all posting while it runs",
    "quit": LEAVE, "exit": LEAVE,
    "restart": f"to restart: {LEAVE}, then run ./safeclaw again (memory, history and approvals are kept)",
    "logs": "the logs are in logs/ (agent.log, router.log, dashboard.log); ./safeclaw status and "
            "./safeclaw doctor sum them up",
    "config": "settings: ./safeclaw agent config llm|timeout|telegram, or edit agent/config.json and "
              "router/.env (docs/settings.md)",
    "version": "SafeClaw has no release number yet: git log -1 shows the version you run",
}


def unknown_command(word: str) -> str:
    import difflib

    if word.lower() in TRIED_FIRST:
        return f"{word!r} is not a command: {TRIED_FIRST[word.lower()]}"
    close = difflib.get_close_matches(word, ALL_COMMANDS, n=1, cutoff=0.7)
    hint = f"; did you mean ./safeclaw {close[0]}?" if close else ""
    return f"unknown command {word!r}{hint} (./safeclaw --help lists them)"


class PrintHelp(argparse.Action):
    """`--help` prints scripts/help.txt, the same text the shell script prints."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(HELP_TEXT, end="")
        parser.exit()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./safeclaw", add_help=False)
    parser.add_argument("-h", "--help", action=PrintHelp)
    parser.add_argument("command", nargs="?", default="run", choices=["run", "status", "doctor"])
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
    if argv[:1] == ["help"]:
        argv = ["--help"]
    if argv[:1] == ["start"]:  # what a person types to start it
        argv = ["run", *argv[1:]]
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
    except OSError as exc:  # a read-only checkout, a full disk, a file where a folder should be
        say(cannot_write(exc))
        return 1


def cannot_write(exc: OSError) -> str:
    what = exc.filename or "a file of SafeClaw's"
    return (f"cannot write {what} ({(exc.strerror or str(exc)).lower()}): SafeClaw keeps its run files, "
            "logs and data beside itself; make the folder writable, or choose others with SAFECLAW_RUN_DIR, "
            "SAFECLAW_LOG_DIR and ROUTER_DATA_DIR (docs/settings.md)")


def control(argv: list[str]) -> int:
    """`./safeclaw approvals|approve|deny|stop-posting|resume-posting|audit verify`."""
    from scripts.control_cli import run as run_control  # the router's audit and policy: not for a start

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
    return run_in_foreground(command, cwd=REPO_ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
