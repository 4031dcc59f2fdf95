"""A Ctrl-C that lands while Python 3.11 creates a class (a dataclass field's `__set_name__`, as
every import of a settings module does) still ends the program quietly with 130: Python wraps the
SystemExit in RuntimeError there, and that once printed a traceback on the owner's terminal."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.stack.stack_helpers import REPO_ROOT

PROGRAM = textwrap.dedent("""
    import os, signal
    from protocol.ctrl_c import leave_on_ctrl_c
    leave_on_ctrl_c()

    class Interrupting:
        def __set_name__(self, owner, name):
            os.kill(os.getpid(), signal.SIGINT)  # the owner's Ctrl-C, inside class creation
            for _ in range(10_000_000):
                pass

    class Settings:
        field = Interrupting()

    print("went on")
""")


def test_a_ctrl_c_during_class_creation_leaves_with_130_and_no_traceback():
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "went on" not in done.stdout, done.stderr
    assert done.stderr == "\n"
