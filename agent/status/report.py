"""`status` and `doctor`: the stack's health as the agent sees it, one line per check."""

from __future__ import annotations

import sys

import redis

from agent.channels.display import showable, terminal_width, wrapped
from agent.config.settings import AgentSettings
from agent.status.host import (
    agent_state_checks,
    check_browser,
    check_llm,
    check_no_credentials,
    check_packages,
    check_python,
)
from agent.status.line import Check, first_line
from agent.status.stack import (
    check_acl,
    check_redis,
    posting_lines,
    queue_line,
    router_heartbeats,
    router_lines,
    running_agent,
)


def show(line: str) -> None:
    print(showable(wrapped(line, terminal_width(sys.stdout), hang="  "), sys.stdout))


def status_checks(settings: AgentSettings, pool: redis.Redis | None) -> list[Check]:
    """`pool`: a client on the process's one pool (None without REDIS_URL); left open for its owner."""
    redis_check, conn = check_redis(settings, pool)
    agent = running_agent(conn, settings.keys)
    checks = [check_llm(settings, agent), redis_check]
    if conn is None:
        checks.append(Check(False, "routers, queue, kill switch and dry run unknown while Redis does not "
                                   "answer"))
        return checks + agent_state_checks(settings)
    try:
        checks += router_lines(conn, settings.keys)
        checks += posting_lines(conn, settings.keys, router_heartbeats(conn, settings.keys))
        checks.append(queue_line(conn, settings.keys))
    except redis.RedisError as exc:
        checks.append(Check(False, f"Redis error while reading routers and queue: {first_line(exc)}"))
    return checks + agent_state_checks(settings, agent)


def status_lines(settings: AgentSettings, pool: redis.Redis | None) -> list[str]:
    """A few lines for `start_agent.py status` and Telegram's /status."""
    return [check.line() for check in status_checks(settings, pool)]


def status(settings: AgentSettings, pool: redis.Redis | None) -> int:
    checks = status_checks(settings, pool)
    for check in checks:
        show(check.line())
    return 0 if all(check.ok for check in checks) else 1


def doctor_checks(settings: AgentSettings, pool: redis.Redis | None) -> list[Check]:
    redis_check, conn = check_redis(settings, pool)
    agent = running_agent(conn, settings.keys)
    provider = str(agent.get("llm_provider") or settings.llm.provider) if agent else settings.llm.provider
    checks = [check_python(), check_packages(provider), check_no_credentials(settings.platform_credentials),
              redis_check]
    if conn is not None and settings.redis_url:
        try:
            checks += check_acl(conn, settings.redis_url, settings.keys)
            beats = router_heartbeats(conn, settings.keys)
            checks += router_lines(conn, settings.keys)[:1] + posting_lines(conn, settings.keys, beats)
        except redis.RedisError as exc:
            checks.append(Check(False, f"Redis error during the checks: {first_line(exc)}"))
    checks.append(check_browser(settings.browser))
    checks.append(check_llm(settings, agent))
    checks += agent_state_checks(settings, agent)
    return checks


def doctor(settings: AgentSettings, pool: redis.Redis | None) -> int:
    checks = doctor_checks(settings, pool)
    for check in checks:
        show(check.line())
    failed = sum(not check.ok for check in checks)
    show("All checks passed." if not failed else f"{failed} check(s) failed: fix the ✗ lines above.")
    return 0 if not failed else 1
