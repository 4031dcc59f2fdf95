"""A Ctrl-C at any instant of `./safeclaw`'s start, typed in a real terminal at an interactive shell
(pexpect), as a newcomer does: the stack leaves with status 130, the shell's prompt starts a line of
its own, no traceback or fatal error is printed, the terminal is as it was, and no process the stack
started is left.

Before: a Ctrl-C in the first split second came before the start script's trap (a non-interactive
parent then left `^C` without a newline), or while the exec'd Python set up its standard streams
("Fatal Python error: init_sys_streams"), or during the runner's first imports (a traceback)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pexpect
import pytest

from scripts.stack_processes import run_in_foreground
from tests.stack.stack_helpers import (
    PROMPT,
    REPO_ROOT,
    interactive_shell,
    processes_naming,
    stack_arguments,
    stack_env,
)

JOB_RUNS = "the-job-runs"
# Every 10 ms of the first half second (and the very first instants): the start script's first
# lines, Python's own start, the runner's imports, then Redis', the router's and the agent's starts;
# then every 100 ms to 2 s: waiting for the router, the start gate, the console opening.
INSTANTS = (0.0, 0.001, 0.002, 0.005, *(step / 100 for step in range(1, 51)),
            *(step / 10 for step in range(6, 21)))
CRASH_WORDS = ("Traceback", "Fatal Python error", "KeyboardInterrupt", "Exception ignored", "Error")


@pytest.mark.slow
@pytest.mark.parametrize("after", INSTANTS)
def test_ctrl_c_at_any_instant_of_the_start_leaves_cleanly(tmp_path, after):
    env = {**stack_env(tmp_path, ["never used"]), "SAFECLAW_SKIP_INSTALL": "1"}
    shell = interactive_shell(env)
    # The job says when it has the terminal (a Ctrl-C before that reaches the shell, not the job),
    # then becomes `./safeclaw` in the same process.
    shell.sendline(f"(echo {JOB_RUNS}; exec ./safeclaw {stack_arguments(tmp_path)})")
    shell.expect_exact(f"\r\n{JOB_RUNS}\r\n")
    time.sleep(after)
    shell.sendintr()
    shell.expect_exact(PROMPT)
    printed = shell.before
    shell.sendline("echo EXIT=$?; stty -a")
    shell.expect(r"EXIT=(\d+)")
    code = int(shell.match.group(1))
    shell.expect_exact(PROMPT)
    stty = shell.before
    shell.sendline("exit")
    shell.expect(pexpect.EOF)

    assert not [word for word in CRASH_WORDS if word in printed], printed
    assert code == 130 or (code == 0 and "Bye." in printed), (code, printed)  # or the console's leave
    assert printed.endswith("\n"), repr(printed[-80:])  # the prompt is not glued to ^C
    flags = set(stty.split())
    assert {"icanon", "echo", "isig"} <= flags and not {"-icanon", "-echo", "-isig"} & flags, stty
    assert processes_naming(str(tmp_path)) == []
    assert not list(tmp_path.rglob("*.tmp")), list(tmp_path.rglob("*.tmp"))  # no write left torn


def with_ctrl_c_pending() -> None:
    """In the child, before exec: SIGINT blocked and already sent, as if Ctrl-C came during Python's
    start (bash keeps the mask across its own exec, as `./safeclaw` then blocks it itself)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.raise_signal(signal.SIGINT)


# Every command of `./safeclaw` that runs one of SafeClaw's programs in its place (`--help` runs none:
# the script prints it itself).
SCRIPT_COMMANDS = ("", "rules", "agent", "router", "social", "mcp", "compose-init")


@pytest.mark.parametrize("command", SCRIPT_COMMANDS)
def test_every_program_the_script_runs_takes_a_ctrl_c_that_came_while_python_started(tmp_path, command):
    env = {**stack_env(tmp_path, ["never used"]), "SAFECLAW_SKIP_INSTALL": "1"}
    arguments = {"": stack_arguments(tmp_path).split(), "compose-init": [str(tmp_path)]}.get(command, [])
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), *filter(None, [command]), *arguments], env=env,
                          cwd=REPO_ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          preexec_fn=with_ctrl_c_pending)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\n")
    assert not (tmp_path / "run").exists() and not (tmp_path / ".run").exists()  # nothing started


@pytest.mark.parametrize("module", ["router.mcp", "router.social"])
def test_the_programs_other_programs_start_take_a_ctrl_c_that_came_while_python_started(module):
    done = subprocess.run([sys.executable, "-m", module], cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, preexec_fn=with_ctrl_c_pending)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\n")


def test_a_child_run_in_the_foreground_starts_with_ctrl_c_held_and_answers_it_itself():
    report = ("import signal; print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), "
              "signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    held = subprocess.run([sys.executable, "-c", "from scripts.stack_processes import run_in_foreground; "
                           f"import sys; run_in_foreground([sys.executable, '-c', {report!r}])"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert held.stdout.split() == ["True", "True"], held.stderr
    before = signal.getsignal(signal.SIGINT)
    dies_of_ctrl_c = ("import os, signal; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                      "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); os.kill(os.getpid(), 2)")
    assert run_in_foreground([sys.executable, "-c", dies_of_ctrl_c]) == 130
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_in_a_script_run_by_the_installed_python_is_a_keyboard_interrupt_as_usual(tmp_path):
    shell = interactive_shell({**os.environ})
    shell.sendline("./safeclaw python -c \"import time; print('wai' + 'ting', flush=True); time.sleep(60)\"")
    shell.expect_exact("waiting")
    shell.sendintr()
    shell.expect_exact(PROMPT)
    assert "KeyboardInterrupt" in shell.before
    shell.sendline("echo EXIT=$?")
    shell.expect(r"EXIT=(\d+)")
    assert shell.match.group(1) == "130"
    shell.sendline("exit")
    shell.expect(pexpect.EOF)


def test_ctrl_c_while_the_one_shot_tool_waits_for_its_command_leaves_quietly(tmp_path):
    shell = interactive_shell({**os.environ, "ROUTER_DATA_DIR": str(tmp_path)})
    shell.sendline("./safeclaw social")
    time.sleep(1.0)  # reading its command from the terminal
    shell.sendintr()
    shell.expect_exact(PROMPT)
    printed = shell.before
    shell.sendline("echo EXIT=$?")
    shell.expect(r"EXIT=(\d+)")
    assert shell.match.group(1) == "130"
    assert not [word for word in CRASH_WORDS if word in printed] and printed.endswith("\n"), printed
    shell.sendline("exit")
    shell.expect(pexpect.EOF)


@pytest.mark.parametrize("command, question", [("agent config timeout", "Seconds to wait"),
                                                ("agent config llm", "LLM provider"), ("mcp", "")])
def test_ctrl_c_at_a_question_or_at_a_waiting_server_ends_the_line_and_says_130(tmp_path, command, question):
    """Before: the agent's questions and the MCP server returned 0 and left the shell's prompt
    after `^C`, as if the command had done its work."""
    config = tmp_path / "config.json"
    shutil.copyfile(REPO_ROOT / "agent" / "config" / "initial.json", config)
    before = config.read_bytes()
    shell = interactive_shell({**os.environ, "SAFECLAW_CONFIG": str(config), "SAFECLAW_SKIP_INSTALL": "1"})
    shell.sendline(f"./safeclaw {command}")
    if question:
        shell.expect_exact(question)
        # As a person would, once the question is there: CPython's readline misses a Ctrl-C that
        # comes in the instant between drawing the prompt and waiting for a key (until a key).
        time.sleep(0.5)
    else:
        time.sleep(1.0)  # the server waits for its client (a Ctrl-C while it starts ends the same way)
    shell.sendintr()
    if question and shell.expect_exact([PROMPT, pexpect.TIMEOUT], timeout=5) == 1:
        # A busy machine can still land it in that instant: it is kept until the next key, and a
        # person presses Ctrl-C again.
        shell.sendintr()
        shell.expect_exact(PROMPT)
    elif not question:
        shell.expect_exact(PROMPT)
    printed = shell.before
    shell.sendline("echo EXIT=$?")
    shell.expect(r"EXIT=(\d+)")
    assert shell.match.group(1) == "130", printed
    assert printed.endswith("^C\r\n") and not [w for w in CRASH_WORDS if w in printed], repr(printed)
    assert config.read_bytes() == before  # nothing answered, nothing saved
    shell.sendline("exit")
    shell.expect(pexpect.EOF)
