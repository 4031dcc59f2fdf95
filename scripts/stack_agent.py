"""The agent as `./safeclaw` runs it: on this terminal in the foreground, with the LLM provider
chosen for this machine, behind a start gate that opens once the rest of the stack is up.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
from typing import Any

from scripts.stack_processes import REPO_ROOT, Stack, StackError, agent_child_setup, say


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


class StartGate:
    """The agent starts with the router (its imports take as long as the router's start), and
    waits on this pipe before it shows anything: the console opens once the stack is up and its
    lines are printed. Closed without a word, it tells the agent to leave (the stack failed)."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()

    def args(self) -> list[str]:
        return ["--start-gate", str(self.read_end)]

    def handed_over(self) -> None:
        os.close(self.read_end)  # the agent holds its own copy

    def open(self) -> None:
        with contextlib.suppress(OSError):  # an agent that already left
            os.write(self.write_end, b"go")
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.write_end)


def agent_command(args: argparse.Namespace, command: str = "run") -> list[str]:
    cmd = [sys.executable, str(REPO_ROOT / "agent" / "start_agent.py"), command]
    for channel in args.channel or []:
        cmd += ["--channel", channel]
    return cmd + (["--verbose"] if args.verbose else [])


def launch_agent(
    stack: Stack, command: list[str], env: dict[str, str], gate: StartGate
) -> subprocess.Popen[Any]:
    """The agent on this terminal, in the foreground group (a Ctrl-C reaches it directly); it shows
    nothing until the gate opens."""
    agent = subprocess.Popen([*command, *gate.args()], cwd=REPO_ROOT, env=env, preexec_fn=agent_child_setup,
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
