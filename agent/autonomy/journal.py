"""The optional git journal (`channels.autonomy.git_journal: true`): after each cycle the
workspace's state is committed to a local git repository (kept in `.journal.git`, apart from any
repository the workspace sits in), so `git log` tells what the agent did and learned.

Only listed state is ever added, so no credential and no .env can be committed: the governance
files, autonomy's state, memory, histories and the activity and cost logs.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

log = logging.getLogger("safeclaw.agent.autonomy")
JOURNAL_DIR = ".journal.git"
TRACKED = (
    "governance",
    "autonomy",
    "memory.json",
    "history",
    "logs/activity.jsonl",
    "logs/cost.jsonl",
    "SOUL.md",
)
NEVER = (".env", "*.env", ".env.*", "*.key", "*.pem", "*secret*", "*token*", "*password*", "*credential*")
TIMEOUT = 30


class GitJournal:
    def __init__(self, workspace_root: Path) -> None:
        self.root = workspace_root
        self.git_dir = workspace_root / JOURNAL_DIR

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                "git",
                f"--git-dir={self.git_dir}",
                f"--work-tree={self.root}",
                "-c",
                "user.name=SafeClaw",
                "-c",
                "user.email=safeclaw@localhost",
                "-c",
                "commit.gpgsign=false",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    def _ensure(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            subprocess.run(
                ["git", "init", "--quiet", "--bare", str(self.git_dir)],
                capture_output=True,
                timeout=TIMEOUT,
                check=True,
            )
        exclude = self.git_dir / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text("\n".join([JOURNAL_DIR, *NEVER]) + "\n", encoding="utf-8")

    def commit(self, message: str) -> str | None:
        """Commit what changed; the new commit's id, or None when nothing changed or git failed."""
        try:
            self._ensure()
            present = [p for p in TRACKED if (self.root / p).exists()]
            if not present:
                return None
            added = self._git("add", "--all", "--", *present)
            if added.returncode != 0:
                log.warning("git journal: add failed: %s", added.stderr.strip()[:200])
                return None
            if self._git("diff", "--cached", "--quiet").returncode == 0:
                return None
            done = self._git("commit", "--quiet", "-m", message)
            if done.returncode != 0:
                log.warning("git journal: commit failed: %s", done.stderr.strip()[:200])
                return None
            return self._git("rev-parse", "HEAD").stdout.strip() or None
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("git journal: %s", exc)
            return None
