"""Rename SafeClaw's keys from the names before the Redis Cluster hash tag (`safeclaw:...`,
`safeclaw:login:{mcp}:...`) to the tagged ones of `protocol.keys` (`{safeclaw}:...`), so queued
commands, idempotency records, approvals and bounds survive the upgrade.

Run it once on the one Redis (before any move to a cluster), with every router, agent and dashboard
stopped, as a Redis user that may RENAME any key (the `admin` user of the generated ACL), the URL in
the environment so no password shows in `ps`:

    SAFECLAW_ADMIN_REDIS_URL=redis://admin:PASSWORD@127.0.0.1:6379/0 \
        ./safeclaw python scripts/tag_redis_keys.py

RENAMENX keeps each key's value and TTL and never overwrites a key already under its new name (such
a key is listed and left as it is). Then regenerate the ACL file and start again (docs/deploy.md).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make `protocol` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from protocol.keys import Keys

OLD_PREFIX = "safeclaw:"
URL_SETTING = "SAFECLAW_ADMIN_REDIS_URL"
_OLD_LOGIN_TAG = re.compile(r"\{([^{}]*)\}")  # a login's own tag inside the old names ({mcp})


def tagged_name(old: str, keys: Keys | None = None) -> str | None:
    """The tagged name of a key named before the hash tag, None for a key that is not one."""
    if not old.startswith(OLD_PREFIX):
        return None
    return (keys or Keys()).prefix + _OLD_LOGIN_TAG.sub(r"\1", old[len(OLD_PREFIX):])


def tag_keys(conn: redis.Redis) -> tuple[list[str], list[str]]:
    """Rename every old-named key: (the renamed, the ones whose new name was taken)."""
    renamed: list[str] = []
    taken: list[str] = []
    for raw in list(conn.scan_iter(match=f"{OLD_PREFIX}*", count=1000)):
        old = raw.decode() if isinstance(raw, bytes) else str(raw)
        new = tagged_name(old)
        if new is None:
            continue
        (renamed if conn.renamenx(old, new) else taken).append(old)
    return renamed, taken


def main() -> int:
    url = os.environ.get(URL_SETTING, "").strip()
    if not url:
        print(f"safeclaw: set {URL_SETTING} to the admin user's redis:// URL (see this script's help)",
              file=sys.stderr)
        return 2
    conn = redis.Redis.from_url(url, socket_timeout=10)
    try:
        renamed, taken = tag_keys(conn)
    finally:
        conn.close()
    print(f"renamed {len(renamed)} key(s) to the {Keys().prefix} names")
    for old in taken:
        print(f"left {old}: {tagged_name(old)} exists already", file=sys.stderr)
    return 1 if taken else 0


if __name__ == "__main__":
    sys.exit(main())
