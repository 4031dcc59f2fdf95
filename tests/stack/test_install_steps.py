"""`./safeclaw install` on a first run says where it is: "step N of 3" and what each step installs
(how many Python packages, which llama.cpp runtime), instead of minutes of silence.

The venv's Python here is a stand-in that records what pip was asked and installs nothing, so the
test runs offline in a second; the system packages are this machine's (present: step 1 is silent)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tests.stack.stack_helpers import REPO_ROOT

RECORDING_PYTHON = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../asked.log"
exit 0
"""


def test_a_first_install_counts_its_steps_and_says_what_each_installs(tmp_path):
    for program in ("redis-server", "chromedriver", "docker-compose"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is missing here: step 1 would run apt-get")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(RECORDING_PYTHON, encoding="utf-8")
    python.chmod(0o755)
    env = {**os.environ, "VENV": str(venv)}
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), "install"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    steps = re.findall(r"^safeclaw: step (\d) of 3: (.*)$", done.stderr, re.MULTILINE)
    assert [n for n, _ in steps] == ["2", "3"], done.stderr
    listed = [line for name in ("requirements.txt", "requirements-dev.txt")
              for line in (REPO_ROOT / name).read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.lstrip().startswith(("#", "-"))]
    assert f"installing {len(listed)} Python packages" in steps[0][1]
    assert "llama-cpp-python==" in steps[1][1]
    assert "-m pip install -q -r requirements-dev.txt" in (venv / "asked.log").read_text(encoding="utf-8")
