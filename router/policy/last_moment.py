"""The last moment decides: the live kill switch, read again right before a write leaves.

The policy reads the switch before the run (`Policy.kill_switch`); the run may then take seconds
(a login, a token exchange, the instance's facts, the lookup of a parent post or of a post's
author) before its write is sent. So each command's run carries a `LastMoment` (on `SkillContext`),
which its platform client asks right before each write request leaves, after every such step
(`PlatformClient.before_write`). It reads the switch from where the owner sets it: the live key the
dashboard and `./safeclaw stop-posting` write (the control login; the agent's and the MCP server's
logins can only read it), through the caller's own connection. When the switch is on, or cannot
be read, the write is not sent: `SkillError("kill_switch")`, answered `denied` (nothing was sent),
with its audit line as any answer. A switch that cannot be read because Redis does not answer (a
failover, a partition) stops the write too, but as what it is: `SkillError("redis_unavailable")`,
answered `error` "not sent", never as the owner's switch being on (which would pause autonomy and
tell the owner something they did not do).

Nothing else a person can flip changes under a running command: an approval is decided once (the
first decision wins, `protocol.approvals.decide`) and quotas and rate limits are settings read
at start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis

from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from protocol.platform_names import PLATFORM_NAMES
from router.errors import SkillError
from router.policy import kill_switch
from router.policy.effects import Effect

log = logging.getLogger("safeclaw.router.policy")
# Asked right before a write request leaves; raises SkillError("kill_switch") to stop it.
LastMoment = Callable[[], None]
REDIS_UNAVAILABLE = "redis_unavailable"


def kill_switch_check(conn: redis.Redis, keys: Keys, envelope: CommandEnvelope, effect: Effect) -> LastMoment:
    """The command's last-moment check: the live switch read fresh at each call."""

    def last_moment() -> None:
        platform = PLATFORM_NAMES.get(effect.platform, effect.platform)
        try:
            state = kill_switch.parse(conn.get(keys.kill_switch))
            why = f"turned on by {state.by or 'the owner'}"
        except (redis.ConnectionError, redis.TimeoutError) as exc:  # fail closed, as Redis being away
            log.warning("command %s: the kill switch could not be read before its write (%s)",
                        envelope.id, type(exc).__name__)
            raise SkillError(
                REDIS_UNAVAILABLE,
                f"{envelope.action} ({effect.scope}) was not sent: Redis did not answer the kill switch's "
                f"read right before the write left ({type(exc).__name__}), so nothing was sent to "
                f"{platform}; try again once Redis answers",
            ) from None
        except redis.RedisError as exc:  # fail closed: a switch nobody may read may be on
            log.warning("command %s: the kill switch's read was refused before its write (%s)",
                        envelope.id, type(exc).__name__)
            state, why = kill_switch.UNREADABLE, f"Redis refused its read ({type(exc).__name__}); fail closed"
        if state.on:
            raise SkillError(
                "kill_switch",
                f"{envelope.action} ({effect.scope}) denied: the kill switch is on ({why}); it was found "
                f"on right before the write left, so nothing was sent to {platform}",
            )

    return last_moment
