"""`./safeclaw social` as a person meets it: typed in a real terminal it says what it waits for
(on stderr: stdout is the one JSON answer); its --help names the command they type, in plain words."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pexpect

from router.social.usage import TYPE_ONE_COMMAND

REPO_ROOT = Path(__file__).resolve().parents[3]


def social_env(tmp_path: Path) -> dict[str, str]:
    env_file = tmp_path / "router.env"
    env_file.write_text("")
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "SAFECLAW_SKIP_INSTALL": "1",
            "ROUTER_ENV_FILE": str(env_file), "ROUTER_DATA_DIR": str(tmp_path / "data"), "TERM": "dumb"}


def test_in_a_terminal_it_says_what_to_type_before_it_waits(tmp_path):
    child = pexpect.spawn(str(REPO_ROOT / "safeclaw"), ["social"], cwd=str(REPO_ROOT), env=social_env(tmp_path),
                          encoding="utf-8", timeout=60, dimensions=(24, 200))
    child.expect_exact(TYPE_ONE_COMMAND)
    assert "./safeclaw social" not in TYPE_ONE_COMMAND and '"command"' in TYPE_ONE_COMMAND
    child.sendline('{"command": "auth_test", "platform": "myspace"}')
    child.sendeof()
    child.expect(r"\{\"success\".*\}")  # after the echo of what was typed
    assert json.loads(child.after)["error"] == "unknown_platform"
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1


def test_piped_input_gets_no_such_line(tmp_path):
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), "social"], cwd=REPO_ROOT, env=social_env(tmp_path),
                          input='{"command": "auth_test", "platform": "myspace"}', capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and json.loads(done.stdout)["error"] == "unknown_platform"
    assert done.stderr == ""


def test_help_names_the_command_a_person_types_in_plain_words(tmp_path):
    done = subprocess.run([str(REPO_ROOT / "safeclaw"), "social", "--help"], cwd=REPO_ROOT,
                          env=social_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ./safeclaw social")
    assert "| ./safeclaw social" in done.stdout
    for internal in ("python -m router.social", "SEED_ERRORS", "Redactor", "router.bounds", "`"):
        assert internal not in done.stdout, internal
    assert max(len(line) for line in done.stdout.splitlines()) <= 100
