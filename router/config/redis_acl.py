"""Generate the Redis 7 ACL file for SafeClaw from `protocol.keys.Keys`.

Four users, each allowed only what its side needs (ACL selectors tie each command to the keys
it may touch), and the `default` user switched off (see `default_user` for what it may replay):

- `agent`: LPUSH/LLEN its command queue; BLPOP/LPOP/DEL its reply keys; SET/GET its own
  heartbeat; GET/SCAN the routers' heartbeats (to report whether a router is alive); GET the
  kill switch (to show it as it is set).
- `router`: BLMOVE/LMOVE from each sending login's queue into its processing list of that queue
  (and back, to return a command it holds); everything list/string it needs under the router
  prefix; LPUSH/EXPIRE on every login's reply keys; its side of the control plane (read the kill
  switch and decisions, store approvals, append the audit stream, push owner notices). It cannot
  put a new command on any queue.
- `control` (the dashboard and `./safeclaw approvals|approve|deny|stop-posting`): reads heartbeats,
  the queue depth, the audit stream, pending approvals and the agent's cost; writes only approval
  decisions (first one wins), the live kill switch and rule injections. It can push no command and
  read no idempotency record, reply or dead letter.
- `mcp` (the MCP server, `python -m router.mcp`): LPUSH its own command queue (not the agent's),
  and BLPOP/LPOP/DEL only its own replies (the agent cannot read these, nor it the agent's);
  GET/SCAN the routers' heartbeats. It holds no platform credential and reads nothing else.

Each login that sends commands (`protocol.keys.SENDING_LOGINS`) has its own queue and replies,
so the queue a command came from says which login sent it: the router takes whose words it
carries from there (`router.queue.senders`), never from the envelope alone.

The agent can neither decide an approval nor touch the kill switch: an owner's decision typed in
a chat reaches the router as an `APPROVAL_DECISION` command that must carry the one-time code the
router gave the owner (see `router.approvals`).

SCAN is a keyless command: it lists key *names* (never values) to whoever may run it.

Usage: python -m router.config.redis_acl --agent-password-file F --router-password-file G --out users.acl
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make `protocol` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.keys import AGENT_LOGIN, MCP_LOGIN, SENDING_LOGINS, Keys

# What redis-py needs to open a connection (AUTH or HELLO+AUTH, CLIENT SETNAME) and stay healthy.
# INFO memory|replication: every connection reads the eviction policy and the role (protocol.redis_safety).
CONNECTION_COMMANDS = ("+ping", "+hello", "+auth", "+client|setname", "+client|getname", "+client|id",
                       "+reset", "+quit", "+info|memory", "+info|replication",
                       # On a Redis Cluster (redis+cluster://): where the slots are, the commands'
                       # key positions (redis-py asks COMMAND once), and following an ASK redirect.
                       "+cluster|slots", "+cluster|shards", "+cluster|nodes", "+command", "+asking")


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
        AGENT_LOGIN,
        password,
        list(CONNECTION_COMMANDS),
        [
            [f"%W~{keys.command_queue_of(AGENT_LOGIN)}", "+lpush"],
            [f"%R~{keys.command_queue_of(AGENT_LOGIN)}", "+llen"],
            [f"~{keys.response_prefix_of(AGENT_LOGIN)}*", "+blpop", "+lpop", "+del", "+llen"],
            [f"~{keys.agent_prefix}*", "+set", "+get", "+expire", "+del"],
            [f"%R~{keys.router_heartbeat('*')}", "+get", "+scan"],
            # The live kill switch, read only: `status` shows it from where it is set.
            [f"%R~{keys.kill_switch}", "+get"],
            # Which approvals wait (ids and expiry only): /approvals and `./safeclaw approvals` agree.
            [f"%R~{keys.approvals_pending}", "+zrange"],
            # Owner notices: take one into its in-flight list, deliver it, then drop it.
            [f"~{keys.owner_notices}", f"~{keys.owner_notices_inflight}", "+lmove", "+llen"],
            [f"~{keys.owner_notices_inflight}", "+lrange", "+lrem", "+llen"],
            # Rule injections: read them, and remove each once applied (never add one).
            [f"~{keys.rule_injections}", "+lrange", "+llen", "+lrem"],
        ],
    )


def router_user(keys: Keys, password: str) -> str:
    return _user(
        "router",
        password,
        # No MULTI/EXEC: Redis before the fix of redis/redis#14541 drops transactions replayed
        # from the AOF when the default user is off. The router's steps are ordered instead; its
        # one script (a command's claim and its bounds, router.queue.claim_step) is kept on replay
        # by `default_user`. WAIT: a claim reaches the replicas before its effect (router.queue.replica_wait).
        [*CONNECTION_COMMANDS, "+scan", "+script|load", "+wait"],
        [
            # Take a command (BLMOVE a login's queue -> own processing list of it) or hand one back.
            *([f"~{keys.command_queue_of(login)}", f"~{keys.processing_of(login, '*')}", "+blmove", "+lmove",
               "+llen"] for login in SENDING_LOGINS),
            [
                f"~{keys.router_prefix}*",
                "+get", "+set", "+del", "+exists", "+expire", "+ttl", "+incr", "+incrby",
                "+lpush", "+rpush", "+lrange", "+lrem", "+lindex", "+llen", "+lmove", "+ltrim",
                # hard bounds (router.bounds): quota counters, pacing and sent-text histories
                "+decr", "+decrby", "+getdel", "+zadd", "+zrange", "+zrangebyscore", "+zcard", "+zrem",
                "+zremrangebyscore",
                "+evalsha",  # the claim's script: every key it touches is one of its KEYS
            ],
            [*(f"%W~{keys.response_prefix_of(login)}*" for login in SENDING_LOGINS), "+lpush", "+expire"],
            [f"%R~{keys.kill_switch}", "+get"],
            [f"~{keys.approval_prefix}*", "+get", "+set", "+del", "+expire", "+exists", "+zadd", "+zrem",
             "+zrangebyscore", "+zremrangebyscore", "+zcard", "+zscore", "+lpush"],
            [f"~{keys.approvals_decided}", f"~{keys.approvals_taken('*')}", "+lmove"],
            # Its own copy of the audit log, and its newest lines read back by `audit verify`.
            [f"~{keys.audit_stream}", "+xadd", "+xrevrange"],
            [f"%W~{keys.owner_notices}", "+lpush", "+ltrim"],
        ],
    )


def control_user(keys: Keys, password: str) -> str:
    return _user(
        "control",
        password,
        [*CONNECTION_COMMANDS, "+scan"],
        [
            [f"%R~{keys.router_heartbeat('*')}", f"%R~{keys.agent_heartbeat}", f"%R~{keys.agent_cost}",
             f"%R~{keys.agent_autonomy}", "+get", "+getrange"],
            [f"%R~{keys.command_queue}", f"%R~{keys.dead_letter}", "+llen"],
            [f"%R~{keys.audit_stream}", "+xrange", "+xrevrange", "+xread", "+xlen"],
            [f"%R~{keys.approvals_pending}", "+zrange", "+zrangebyscore", "+zcard", "+zscore"],
            [f"%R~{keys.approval('*')}", "+get"],
            [f"~{keys.approval_decision('*')}", "+get", "+set"],
            [f"%W~{keys.approvals_decided}", "+lpush"],
            [f"~{keys.kill_switch}", "+get", "+set", "+del"],
            [f"~{keys.rule_injections}", "+lpush", "+lrange", "+llen", "+ltrim", "+lrem"],
        ],
    )


def mcp_user(keys: Keys, password: str) -> str:
    return _user(
        MCP_LOGIN,
        password,
        list(CONNECTION_COMMANDS),
        [
            [f"%W~{keys.command_queue_of(MCP_LOGIN)}", "+lpush"],
            [f"~{keys.response_prefix_of(MCP_LOGIN)}*", "+blpop", "+lpop", "+del"],
            [f"%R~{keys.router_heartbeat('*')}", "+get", "+scan"],
        ],
    )


def admin_user(password: str) -> str:
    """An all-powerful user, for tests and operators only; never give it to agent or router."""
    return f"user admin on {password_hash(password)} ~* &* +@all"


# What the claim's script writes, as Redis writes it to the AOF (SET EX as SET PXAT, EXPIRE as
# PEXPIREAT, a key found expired as DEL or UNLINK), wrapped in MULTI/EXEC.
SCRIPT_WRITES = ("+set", "+incrby", "+pexpireat", "+zadd", "+zremrangebyscore", "+del", "+unlink")


def default_user(keys: Keys) -> str:
    """Off: no client can log in as it. Redis before the fix of redis/redis#14541 replays an AOF's
    MULTI/EXEC as this user and drops what it may not run: it may run the claim's script's writes
    on the router's keys, so a claim and its bounds survive a restart (and nothing else is given)."""
    rules = ["off", "resetkeys", "resetchannels", "-@all", f"~{keys.router_prefix}*", *SCRIPT_WRITES]
    return " ".join(["user", "default", *rules])


def render_acl(
    keys: Keys, agent_password: str, router_password: str, admin_password: str | None = None,
    control_password: str | None = None, mcp_password: str | None = None,
) -> str:
    lines = [
        default_user(keys),
        agent_user(keys, agent_password),
        router_user(keys, router_password),
    ]
    if control_password is not None:
        lines.append(control_user(keys, control_password))
    if mcp_password is not None:
        lines.append(mcp_user(keys, mcp_password))
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
    parser = argparse.ArgumentParser(
        prog="./safeclaw python -m router.config.redis_acl", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--agent-password-file", type=Path, required=True)
    parser.add_argument("--router-password-file", type=Path, required=True)
    parser.add_argument("--control-password-file", type=Path, help="the dashboard's user (control plane)")
    parser.add_argument("--mcp-password-file", type=Path, help="the MCP server's user (./safeclaw mcp)")
    parser.add_argument("--admin-password-file", type=Path, help="optional operator user with every right")
    parser.add_argument("--command-queue", default=Keys.command_queue)
    parser.add_argument("--response-prefix", default=Keys.response_prefix)
    parser.add_argument("--out", type=Path, required=True, help="where to write the ACL file")
    args = parser.parse_args(argv)
    keys = Keys(command_queue=args.command_queue, response_prefix=args.response_prefix)
    admin = _read_password(args.admin_password_file) if args.admin_password_file else None
    control = _read_password(args.control_password_file) if args.control_password_file else None
    mcp = _read_password(args.mcp_password_file) if args.mcp_password_file else None
    text = render_acl(
        keys, _read_password(args.agent_password_file), _read_password(args.router_password_file), admin,
        control, mcp,
    )
    args.out.write_text(text, encoding="utf-8")
    args.out.chmod(0o600)
    users = ["agent", "router", *(["control"] if control else []), *(["mcp"] if mcp else []),
             *(["admin"] if admin else [])]
    print(f"wrote {args.out} (users: {', '.join(users)}; default off)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
