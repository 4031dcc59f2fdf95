"""Generate the Redis 7 ACL file for SafeClaw from `protocol.Keys`.

Two users, each allowed only what its side of the wire needs (ACL selectors tie each command
to the keys it may touch), and the `default` user switched off:

- `agent`: LPUSH/LLEN the command queue; BLPOP/LPOP/DEL its reply keys; SET/GET its own
  heartbeat; GET/SCAN the routers' heartbeats (to report whether a router is alive).
- `router`: BLMOVE/LMOVE from the command queue into its processing lists (and back, to return
  a command it holds); everything list/string it needs under the router prefix; LPUSH/EXPIRE
  on reply keys. It cannot put a new command on the queue.

SCAN is a keyless command: it lists key *names* (never values) to whoever may run it.

Usage: python -m router.acl --agent-password-file F --router-password-file G --out users.acl
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make `protocol` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol import Keys

# What redis-py needs to open a connection (AUTH or HELLO+AUTH, CLIENT SETNAME) and stay healthy.
CONNECTION_COMMANDS = ("+ping", "+hello", "+auth", "+client|setname", "+client|getname", "+client|id",
                       "+reset", "+quit")


def password_hash(password: str) -> str:
    """The `#<sha256>` form Redis accepts, so the file never holds a clear password."""
    if not password:
        raise ValueError("a Redis ACL password must not be empty")
    return "#" + hashlib.sha256(password.encode("utf-8")).hexdigest()


def _user(name: str, password: str, rules: list[str], selectors: list[list[str]]) -> str:
    parts = ["user", name, "on", password_hash(password), "resetkeys", "resetchannels", "-@all", *rules]
    parts += ["(" + " ".join(selector) + ")" for selector in selectors]
    return " ".join(parts)


def agent_user(keys: Keys, password: str) -> str:
    return _user(
        "agent",
        password,
        list(CONNECTION_COMMANDS),
        [
            [f"%W~{keys.command_queue}", "+lpush"],
            [f"%R~{keys.command_queue}", "+llen"],
            [f"~{keys.response_prefix}*", "+blpop", "+lpop", "+del", "+llen"],
            [f"~{keys.agent_prefix}*", "+set", "+get", "+expire", "+del"],
            [f"%R~{keys.router_heartbeat('*')}", "+get", "+scan"],
        ],
    )


def router_user(keys: Keys, password: str) -> str:
    return _user(
        "router",
        password,
        # No MULTI/EXEC: Redis before the fix of redis/redis#14541 drops transactions replayed
        # from the AOF when the default user is off. The router's steps are ordered instead.
        [*CONNECTION_COMMANDS, "+scan"],
        [
            # Take a command (BLMOVE queue -> own processing list) or hand one back (LMOVE back).
            [f"~{keys.command_queue}", f"~{keys.processing('*')}", "+blmove", "+lmove", "+llen"],
            [
                f"~{keys.router_prefix}*",
                "+get", "+set", "+del", "+exists", "+expire", "+ttl", "+incr", "+incrby",
                "+lpush", "+rpush", "+lrange", "+lrem", "+lindex", "+llen", "+lmove",
            ],
            [f"%W~{keys.response_prefix}*", "+lpush", "+expire"],
        ],
    )


def admin_user(password: str) -> str:
    """An all-powerful user, for tests and operators only; never give it to agent or router."""
    return f"user admin on {password_hash(password)} ~* &* +@all"


def render_acl(
    keys: Keys, agent_password: str, router_password: str, admin_password: str | None = None
) -> str:
    lines = [
        "user default off resetkeys resetchannels -@all",
        agent_user(keys, agent_password),
        router_user(keys, router_password),
    ]
    if admin_password is not None:
        lines.append(admin_user(admin_password))
    return "\n".join(lines) + "\n"


def _read_password(path: Path) -> str:
    try:
        password = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SystemExit(f"cannot read password file {path}: {exc.strerror}") from None
    if not password:
        raise SystemExit(f"password file {path} is empty")
    return password


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m router.acl", description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent-password-file", type=Path, required=True)
    parser.add_argument("--router-password-file", type=Path, required=True)
    parser.add_argument("--admin-password-file", type=Path, help="optional operator user with every right")
    parser.add_argument("--command-queue", default=Keys.command_queue)
    parser.add_argument("--response-prefix", default=Keys.response_prefix)
    parser.add_argument("--out", type=Path, required=True, help="where to write the ACL file")
    args = parser.parse_args(argv)
    keys = Keys(command_queue=args.command_queue, response_prefix=args.response_prefix)
    admin = _read_password(args.admin_password_file) if args.admin_password_file else None
    text = render_acl(
        keys, _read_password(args.agent_password_file), _read_password(args.router_password_file), admin
    )
    args.out.write_text(text, encoding="utf-8")
    args.out.chmod(0o600)
    print(f"wrote {args.out} (users: agent, router{', admin' if admin else ''}; default off)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
