"""protocol/ctrl_c.py in real Python processes: a Ctrl-C that came while Python started (SIGINT blocked,
as `./safeclaw` starts it) is taken at the entry point's first act and ends the program quietly."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def with_ctrl_c_pending() -> None:
    """In the child, before exec: SIGINT blocked and already sent, as if Ctrl-C came during the start."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.raise_signal(signal.SIGINT)


def run_python(code: str, preexec=with_ctrl_c_pending) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60, preexec_fn=preexec)


def test_a_ctrl_c_pending_since_the_start_ends_the_program_at_its_first_act():
    done = run_python("""
        from protocol.ctrl_c import leave_on_ctrl_c
        leave_on_ctrl_c()
        print("went on")
    """)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\n")


def test_a_ctrl_c_during_the_imports_after_the_first_act_leaves_without_a_traceback():
    done = run_python("""
        import signal
        from protocol.ctrl_c import leave_on_ctrl_c
        leave_on_ctrl_c()
        print("started", flush=True)
        signal.raise_signal(signal.SIGINT)
        print("went on")
    """, preexec=None)
    assert (done.returncode, done.stdout, done.stderr) == (130, "started\n", "\n")


def test_once_python_takes_ctrl_c_it_is_a_keyboard_interrupt_again():
    done = run_python("""
        import signal
        from protocol.ctrl_c import leave_on_ctrl_c, python_takes_ctrl_c
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        leave_on_ctrl_c()
        python_takes_ctrl_c()
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
        print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
    """, preexec=None)
    assert (done.returncode, done.stdout.split()) == (0, ["KeyboardInterrupt", "True"]), done.stderr


def test_a_sigint_ignored_when_the_program_started_stays_ignored():
    def ignored() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with_ctrl_c_pending()

    done = run_python("""
        import signal
        from protocol.ctrl_c import leave_on_ctrl_c, python_takes_ctrl_c
        leave_on_ctrl_c()
        python_takes_ctrl_c()
        signal.raise_signal(signal.SIGINT)
        print("still here", signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
    """, preexec=ignored)
    assert (done.returncode, done.stdout.strip()) == (0, "still here True"), done.stderr


def test_a_program_execd_in_its_place_starts_with_ctrl_c_held():
    done = run_python("""
        import os, sys
        from protocol.ctrl_c import hold_ctrl_c_across_exec
        hold_ctrl_c_across_exec()
        os.execv(sys.executable, [sys.executable, "-c",
                 "import signal; print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))"])
    """, preexec=None)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


def test_after_the_line_is_ended_another_ctrl_c_ends_the_process_by_the_signal():
    """Mashed keys: a Ctrl-C while Python winds down runs no handler, and the process would leave
    with the shell's prompt after that `^C`; dying by the signal, the shell ends the line itself."""
    done = run_python("""
        import os, signal
        from protocol.ctrl_c import interrupted
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        interrupted()
        os.kill(os.getpid(), signal.SIGINT)
        print("went on")
    """, preexec=None)
    assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "", "\n")


def test_a_sigterm_while_a_program_starts_ends_it_without_a_torn_write(tmp_path):
    """The stack stopping while one of its programs still starts (its own stop not in place yet):
    the write in hand removes its temp file, where SIGTERM's default action left it on the disk."""
    folder = tmp_path / "state"
    folder.mkdir()
    done = run_python(f"""
        import os, signal
        from pathlib import Path
        from protocol import atomic_file
        from protocol.ctrl_c import leave_on_ctrl_c
        leave_on_ctrl_c()

        def fsync_then_stopped(fd):
            os.kill(os.getpid(), signal.SIGTERM)
        atomic_file.os.fsync = fsync_then_stopped
        atomic_file.write_atomically(Path({str(folder)!r}) / "state.json", b"{{}}")
        print("went on")
    """, preexec=None)
    assert (done.returncode, done.stdout) == (143, ""), done.stderr
    assert list(folder.iterdir()) == []
