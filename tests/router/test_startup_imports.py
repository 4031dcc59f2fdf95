"""Issue 19 (performance): a router's start paid 0.41 s of imports for atproto, which most commands
never use. Loading every skill leaves it unimported; the first Bluesky read imports it."""

import subprocess
import sys

from tests.conftest import REPO_ROOT

PROBE = "from router.registry import discover_skills; discover_skills(); import sys; print('atproto' in sys.modules)"


def test_loading_every_skill_does_not_import_atproto():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
