"""The owner's control commands of `./safeclaw`, as the control Redis user (never the agent's):

    ./safeclaw approvals            the commands waiting for your decision
    ./safeclaw approve ID           run it (once)
    ./safeclaw deny ID              it will never run
    ./safeclaw stop-posting         the live kill switch: every router denies every side effect
    ./safeclaw resume-posting       lift it (ROUTER_KILL_SWITCH=true in a router's env still holds)
    ./safeclaw audit verify         check the audit log (exit 0 verified, 1 broken, 2 end unchecked)

The control login is the one `./safeclaw` wrote for the running stack (`.run/dashboard.env`), or
REDIS_URL in dashboard/.env, or SAFECLAW_CONTROL_REDIS_URL.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import redis

from agent.channels.display import escaped
from dashboard.approvals_view import in_words
from protocol import approvals, kill_switch
from protocol.keys import Keys
from protocol.redis_link import sync_client
from router.audit import verify as audit_verify_module
from router.config.settings import audit_directory
from router.policy.payload_preview import lines as preview_lines
from scripts.stack_env import merged, read_env_file


class ControlError(Exception):
    """Exit 1 with this line."""


def control_url(run_dir: Path, dashboard_env: Path, environ: Mapping[str, str]) -> str:
    url = (
        environ.get("SAFECLAW_CONTROL_REDIS_URL")
        or read_env_file(dashboard_env).get("REDIS_URL")
        or read_env_file(run_dir / "dashboard.env").get("REDIS_URL")
    )
    if not url:
        raise ControlError(
            "no control login found: start the stack with ./safeclaw first, or set "
            "REDIS_URL=redis://control:PASSWORD@host:port/0 in dashboard/.env"
        )
    return url


def not_running(command: str, url: str) -> str:
    where = urlsplit(url)
    line = (f"SafeClaw is not running (nothing answers at {where.hostname}:{where.port}, its Redis): "
            "start it with ./safeclaw, then run this again")
    if command == "stop-posting":
        line += ("; nothing is posted while it is stopped, and ROUTER_KILL_SWITCH=true in router/.env "
                 "starts it with posting stopped")
    return line


def _connect(url: str) -> redis.Redis:
    return sync_client(url, decode_responses=True, socket_connect_timeout=3, socket_timeout=5,
                       accepted_eviction=os.environ.get("REDIS_ACCEPT_EVICTION", "").strip())


def _when(ts: object) -> str:
    if not isinstance(ts, int | float):
        return "?"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def list_approvals(conn: redis.Redis, keys: Keys) -> list[str]:
    """In words, with every field the platform would receive shown escaped (a stranger's text can
    hold terminal controls), and what to type next."""
    found = approvals.pending(conn, keys)
    if not found:
        return ["no approval is waiting"]
    lines = []
    for item in found:
        view = in_words(item)
        state = "" if item["state"] == "pending" else f" ({item['state']})"
        asked, expires = _when(item["requested_at"]), _when(item["expires_at"])
        who = f"{view['title']}, {view['origin_words']}"
        lines.append(f"{item['id']}  {who}, asked {asked}; expires {expires}{state}")
        shown = preview_lines(item.get("payload")) or [f"text: {item['text']}"]
        lines += [f"    {escaped(line)}" for line in shown]
        if item.get("reason"):
            lines.append(f"    why it waits: {escaped(str(item['reason']))}")
        if item.get("read"):
            lines.append(f"    the turn had read: {escaped('; '.join(map(str, item['read'])))}")
        lines.append(f"    ./safeclaw approve {item['id']}  or  ./safeclaw deny {item['id']}")
    return lines


def mirrored_heads(conn: redis.Redis, keys: Keys, scan: int = 10_000) -> dict[str, tuple[int, str]]:
    """Each router's newest audit line in the Redis stream: (seq, hash)."""
    heads: dict[str, tuple[int, str]] = {}
    entries: Any = conn.xrevrange(keys.audit_stream, count=scan)
    for _id, fields in entries:
        try:
            record = json.loads(fields.get("line", ""))
            name, seq, digest = str(record["router"]), int(record["seq"]), str(record["hash"])
        except (ValueError, KeyError, TypeError):
            continue
        heads.setdefault(name, (seq, digest))
    return heads


def audit_verify(run_dir: Path, dashboard_env: Path, router_env: Path, environ: Mapping[str, str]) -> int:
    """The files' chains; each chain's end against its keyed checkpoint and, when the stack is
    reachable, the Redis stream. Exit 0 verified, 1 broken, 2 intact but an end unchecked."""
    env = merged(read_env_file(router_env), environ)
    mirrored: dict[str, tuple[int, str]] | None = None
    try:
        conn = _connect(control_url(run_dir, dashboard_env, environ))
        try:
            mirrored = mirrored_heads(conn, Keys.from_env(environ))
        finally:
            conn.close()
    except (ControlError, redis.RedisError):
        print("(the Redis audit stream is not reachable: the ends are checked against the checkpoints only)")
    report = audit_verify_module.verify(audit_directory(env), audit_verify_module.key_for(env), mirrored)
    print(report.summary())
    return report.exit_code


def run(
    argv: list[str],
    run_dir: Path,
    dashboard_env: Path,
    router_env: Path,
    environ: Mapping[str, str] | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    command, args = argv[0], argv[1:]
    if {"-h", "--help"} & set(args):
        print(__doc__.split("\n\n")[1])
        return 0
    try:
        if command == "audit":
            if args != ["verify"]:
                raise ControlError("usage: ./safeclaw audit verify")
            return audit_verify(run_dir, dashboard_env, router_env, environ)
        keys = Keys.from_env(environ)
        conn = _connect(control_url(run_dir, dashboard_env, environ))
        try:
            if command == "approvals":
                print("\n".join(list_approvals(conn, keys)))
            elif command in ("approve", "deny"):
                if len(args) != 1:
                    raise ControlError(f"usage: ./safeclaw {command} ID (see ./safeclaw approvals)")
                print(approvals.decide(conn, keys, args[0], command, "owner (command line)"))
            elif command in ("stop-posting", "resume-posting"):
                kill_switch.flip(conn, keys, command == "stop-posting", "owner (command line)")
                print(
                    "kill switch ON: nothing is posted, replied to, liked or deleted from now on "
                    "(./safeclaw resume-posting lifts it)"
                    if command == "stop-posting"
                    else "kill switch off: posting is allowed again, within your rules (a router with "
                    "ROUTER_KILL_SWITCH=true in its settings still posts nothing)"
                )
        finally:
            conn.close()
    except approvals.ApprovalError as exc:
        print(f"safeclaw: {exc}", file=sys.stderr)
        return 1
    except ControlError as exc:
        print(f"safeclaw: {exc}", file=sys.stderr)
        return 1
    except redis.ConnectionError:
        url = control_url(run_dir, dashboard_env, environ)
        print(f"safeclaw: {not_running(command, url)}", file=sys.stderr)
        return 1
    except redis.RedisError as exc:
        print(f"safeclaw: Redis: {type(exc).__name__}: {exc}; is the stack running?", file=sys.stderr)
        return 1
    return 0
