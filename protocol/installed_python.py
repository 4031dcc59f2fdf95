"""Run a start script again with the Python `./safeclaw install` made, when a bare Python started it.

Standard library only: it runs before any of SafeClaw's packages can be imported.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from protocol.ctrl_c import hold_ctrl_c_across_exec


def use_the_installed_python(repo_root: Path) -> None:
    """Started by a Python without SafeClaw's packages (`python3 agent/start_agent.py` on a fresh
    machine), run again with the installed one: a command works as the README writes it."""
    installed = repo_root / ".venv" / "bin" / "python"
    if (importlib.util.find_spec("redis") is None and installed.exists()
            and Path(sys.prefix).resolve() != installed.parent.parent.resolve()):  # never a loop
        hold_ctrl_c_across_exec()
        os.execv(installed, [str(installed), *sys.argv])
