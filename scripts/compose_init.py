#!/usr/bin/env python3
"""Prepare the Redis logins for `docker compose`: one password per user, and the ACL file.

Writes (git-ignored, never printed, never part of an image):
  .run/compose/{agent,router,control}.password                each mounted only into its service
  .run/compose/{replica,sentinel}.password                     the replicated profile's own logins
  .run/compose/dashboard.token                                 the dashboard's token (read it to log in)
  .run/compose/users.acl                                       the redis service's ACL (hashes only)
  agent/.env, router/.env (only when missing)                  compose's env files
Passwords already there are kept, so re-running it changes nothing. Needs only Python 3.11.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from protocol.ctrl_c import leave_on_ctrl_c  # noqa: E402

if __name__ == "__main__":
    leave_on_ctrl_c()  # a Ctrl-C ends it quietly (status 130); each file is whole or not there

from protocol.atomic_file import write_atomically  # noqa: E402
from protocol.keys import Keys  # noqa: E402
from router.config.redis_acl import render_acl  # noqa: E402
from router.config.replication_acl import replication_lines  # noqa: E402

# Created when missing, since compose refuses to start without its env files. The router
# starts in dry run: posts go to its outbox until you add credentials and switch this off.
ENV_FILES = {
    "agent/.env": "# the agent's secrets: OPENAI_API_KEY, GEMINI_API_KEY, TELEGRAM_BOT_TOKEN\n",
    "router/.env": "# the router's platform credentials (see .env.example)\nROUTER_DRY_RUN=true\n",
}


def write_private(path: Path, text: str) -> None:
    # 0644 so the container's own user can read its mounted file; the folder is 0700 on the host.
    write_atomically(path, text.encode("utf-8"), durable=False, mode=0o644)


def password(path: Path) -> str:
    if path.is_file() and path.read_text(encoding="utf-8").strip():
        return path.read_text(encoding="utf-8").strip()
    value = secrets.token_urlsafe(24)
    write_private(path, value + "\n")
    return value


def init(root: Path = REPO_ROOT) -> list[Path]:
    """Write the compose logins under `root` (the repository); return the files written."""
    directory = root / ".run" / "compose"
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    agent, router = password(directory / "agent.password"), password(directory / "router.password")
    control = password(directory / "control.password")
    password(directory / "dashboard.token")  # the dashboard's DASHBOARD_TOKEN_FILE
    # The replica's and Sentinel's users (docker compose --profile sentinel): each server replicates
    # as `replica`, Sentinel watches as `sentinel`; neither reaches a key.
    replication = replication_lines(password(directory / "replica.password"),
                                    password(directory / "sentinel.password"))
    write_private(directory / "users.acl",
                  render_acl(Keys(), agent, router, control_password=control) + replication)
    for name, text in ENV_FILES.items():
        path = root / name
        if not path.exists():
            write_atomically(path, text.encode("utf-8"), durable=False, mode=0o600)
    names = ("agent.password", "router.password", "control.password", "dashboard.token", "replica.password",
             "sentinel.password", "users.acl")
    return [directory / name for name in names]


def main(argv: list[str]) -> int:
    if {"-h", "--help"} & set(argv):
        print("usage: ./safeclaw compose-init [FOLDER]: write the Redis users, passwords and the "
              "dashboard token docker compose needs (in FOLDER, the repository by default)")
        return 0
    root = Path(argv[0]) if argv else REPO_ROOT
    files = init(root)
    print(f"Redis users for docker compose are ready in {files[0].parent} "
          f"({', '.join(f.name for f in files)}).")
    print("Next: docker compose up -d redis router dashboard browser ollama && docker compose run --rm agent")
    token = files[0].parent / "dashboard.token"
    print(f"The dashboard is on http://127.0.0.1:8080/ ; its token is in {token}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
