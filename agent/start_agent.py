#!/usr/bin/env python3
"""SafeClaw agent (the mind). Run `python agent/start_agent.py --help`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# Run as a script from the repo root or from inside agent/: import the packages from the root.
if sys.path and Path(sys.path[0]).resolve() == REPO_ROOT / "agent":
    sys.path.pop(0)
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


from protocol.ctrl_c import interrupted, leave_on_ctrl_c, python_takes_ctrl_c  # noqa: E402
from protocol.installed_python import use_the_installed_python  # noqa: E402

use_the_installed_python(REPO_ROOT)
# A Ctrl-C before the console takes it, kept from the first line when the stack started the agent
# with SIGINT ignored: the stack may open its gate while the agent still imports, and the agent
# then leaves as soon as it is up instead of the Ctrl-C being lost (run_agent reads it).
CTRL_C_BEFORE = threading.Event()
# The stack's runner hands the agent its start gate (a pipe's read end) on the command line: process
# plumbing, not a setting, so it is no environment variable.
START_GATE_FLAG = "--start-gate"
if __name__ == "__main__":
    leave_on_ctrl_c()  # a Ctrl-C while the agent starts leaves quietly, never with a traceback
    if START_GATE_FLAG in sys.argv and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, lambda _signum, _frame: CTRL_C_BEFORE.set())

from dotenv import load_dotenv  # noqa: E402

from agent.config.settings import AgentSettings  # noqa: E402
from agent.errors import AgentError  # noqa: E402
from agent.workspace.lock import WorkspaceBusy, WorkspaceLock  # noqa: E402

EPILOG = """commands:
  (none) / run          start the agent with the channels enabled in config.json (console by default)
  config timeout        ask for the router timeout (seconds) and save it
  config llm            ask for the LLM provider and model and save them
  config telegram       set up the Telegram channel (token check, allowed users)
  clear                 clear artifact, conversation histories and the log; nothing else
  status                LLM, Redis, what the router can do and where, queue depth
  doctor                check the setup and print what to fix, one line each
  rules                 list the agent's rule proposals (governance/PROPOSED_RULES.md)
  rules accept N        merge proposal N into governance/DOS.md (only the owner does this)
  autonomy once         run exactly one autonomy cycle and exit (cron, systemd timers, tests)
  autonomy health       exit 1 when autonomy is stuck (for the compose healthcheck)

files and environment:
  agent/config.json     settings (copied from agent/config/initial.json on first run; no secrets)
  agent/.env            secrets and hosts: REDIS_URL, OLLAMA_HOST, OPENAI_API_KEY, GEMINI_API_KEY,
                        TELEGRAM_BOT_TOKEN, REMOTE_BROWSER_SERVER (see .env.example)
  SAFECLAW_WORKSPACE    use another workspace folder (default: workspace/)
  SAFECLAW_CONFIG       use another config file (default: agent/config.json)
"""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="start_agent.py",
        description="SafeClaw agent: the mind that thinks and asks the router to act.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "command",
        nargs="?",
        default="run",
        choices=["run", "config", "clear", "status", "doctor", "rules", "autonomy"],
        help="what to do (default: run)",
    )
    parser.add_argument("key", nargs="?", help="for config: timeout, llm or telegram; rules: accept; "
                        "autonomy: once or health")
    parser.add_argument("value", nargs="?", help="for rules accept: the proposal's number")
    parser.add_argument(
        "--channel",
        action="append",
        dest="channels",
        metavar="NAME",
        help="run this channel (repeatable): console, telegram, bluesky, autonomy. "
        "Default: those enabled in config",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log INFO to stderr too")
    parser.add_argument(START_GATE_FLAG, default="", metavar="FD", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    python_takes_ctrl_c()  # the console and the commands take Ctrl-C from here
    load_dotenv(REPO_ROOT / "agent" / ".env", override=False)
    try:
        return run_command(args)
    except AgentError as exc:
        print(f"safeclaw: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a command or a question interrupted (the console takes Ctrl-C itself)
        return interrupted()


def run_command(args: argparse.Namespace) -> int:
    from agent.config.settings import config_path_from_env, configure, load_settings, read_environment

    env = read_environment()
    if args.command == "config":
        if args.key == "telegram":
            from agent.channels.telegram_setup import configure_telegram
            from agent.config.channel_sections import TelegramSettings

            configure_telegram(config_path_from_env(env), TelegramSettings.from_env(env))
            return 0
        if args.key not in ("timeout", "llm"):
            print("usage: start_agent.py config {timeout|llm|telegram}", file=sys.stderr)
            return 2
        configure(args.key, config_path_from_env(env))
        return 0
    if args.command == "doctor":
        from agent.config.settings import load_config_file, settings_from_config
        from agent.link.redis_pool import build_redis
        from agent.status import report

        # Doctor reports platform credentials in the environment as a problem to fix, so it
        # loads settings without the start-up check that refuses them.
        path = config_path_from_env(env)
        doctor_settings = settings_from_config(load_config_file(path), path, env)
        return report.doctor(doctor_settings, build_redis(doctor_settings))
    settings = load_settings(env)
    if args.command == "clear":
        with WorkspaceLock(settings.workspace.root):  # never under a running agent's feet
            removed = settings.workspace.clear()
        print("Cleared: " + (", ".join(removed) if removed else "nothing to clear"))
        return 0
    if args.command == "status":
        from agent.link.redis_pool import build_redis
        from agent.status import report

        return report.status(settings, build_redis(settings))
    if args.command == "rules":
        from agent.governance.cli import rules_command

        return rules_command(settings, args.key, args.value)
    if args.command == "autonomy":
        return autonomy_command(settings, args)
    return run_agent(settings, args, args.start_gate)


def wait_for_the_stack(gate: str) -> bool:
    """Started by ./safeclaw beside the router: wait for the stack to be up before showing anything
    (the runner opens the gate); False when it closed it without a word (the stack failed)."""
    if not gate.isdigit():
        return True
    fd = int(gate)
    try:
        return bool(os.read(fd, 16))
    except OSError:
        return True  # no such pipe: started by hand with the variable set; go on
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def run_agent(settings: AgentSettings, args: argparse.Namespace, gate: str = "") -> int:
    from agent.app import build_service
    from agent.logs import setup_logging
    from agent.service import enabled_channels

    # From here until the console takes Ctrl-C, one is kept rather than lost: the stack's runner
    # leaves Ctrl-C to the agent once it opens the gate, maybe while the agent still builds its
    # service (it was started with SIGINT ignored, so that Python's own start cannot crash on one).
    ctrl_c_before = CTRL_C_BEFORE
    if gate and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, lambda _signum, _frame: ctrl_c_before.set())
    removed = settings.workspace.prepare()  # a read-only workspace stops here, in one line
    lock = WorkspaceLock(settings.workspace.root).acquire()  # one agent per workspace, for its life
    setup_logging(settings.workspace.log_path, settings.secrets(), args.verbose)
    if removed:
        logging.getLogger("safeclaw.agent").warning(
            "removed %d temp file(s) of a write killed earlier: %s",
            len(removed),
            ", ".join(map(str, removed)),
        )
    try:
        service = build_service(settings)
        if not wait_for_the_stack(gate):
            return 0
        code = asyncio.run(service.run(args.channels or enabled_channels(settings), ctrl_c_before))
        # Leaving (the console said Bye): the stack's runner may still ask it to stop, which
        # must not end it by the signal, as if it had been stopped before its console was up.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return code
    finally:
        lock.release()


def autonomy_command(settings: AgentSettings, args: argparse.Namespace) -> int:
    if args.key == "health":
        from agent.autonomy.health import health_command

        return health_command(settings)
    if args.key != "once":
        print("usage: start_agent.py autonomy {once|health}", file=sys.stderr)
        return 2
    from agent.app import run_autonomy_once
    from agent.logs import setup_logging

    settings.workspace.ensure()
    lock = WorkspaceLock(settings.workspace.root)
    try:
        lock.acquire()
    except WorkspaceBusy as busy:
        # The running agent makes its own cycles; a second one at the same moment would act twice.
        print(f"autonomy cycle skipped: the agent (pid {busy.pid or '?'}) holds this workspace")
        return 0
    try:
        setup_logging(settings.workspace.log_path, settings.secrets(), args.verbose)
        return run_autonomy_once(settings)
    finally:
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
