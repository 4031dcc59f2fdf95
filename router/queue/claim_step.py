"""A command's claim and the shares it takes, as one atomic step: one Lua script run by Redis.

Copies of one command (a sender that sent it again, a queue item recovered twice) race for its
claim, the `started` record set NX. Before, each copy took its share of the bounds in the claim's
round trip, beside it and not after it: the copy that won then saw the losers' shares (their
texts in the duplicate guard, their pacing slots, their quota units) and refused itself, and the
command was never run. Here the claim decides: the script sets the record NX and, only when it
was set, runs the commands the bounds (and the rate limits) staged; a copy that loses takes
nothing and is answered as a copy.

`GatedCommands` records those commands with a pipeline's method names (what `router.bounds` and
`router.policy.rate_limits` stage), so each bound stages into it exactly as into a pipeline and
settles the script's answers exactly as a pipeline's. Every key the script touches is passed in
KEYS (the claim's two first), never built in the script, so it can move to a Redis Cluster once
the keys of one command share a slot.

The script rides the caller's round trip (the reads ahead of the policy, or the bounds' own):
EVALSHA is one command of that pipeline, so a post makes no more round trips than before. After
Redis lost its script cache (a restart, a failover) the first EVALSHA answers NOSCRIPT: that one is
loaded (SCRIPT LOAD) and sent again alone, once.

On the AOF: Redis writes the script's effects wrapped in MULTI/EXEC, which Redis before the fix of
redis/redis#14541 drops on replay when the `default` user may not run them; the ACL file gives the
(switched off, so unusable) `default` user exactly the script's writes on the router's keys, so a
claim made before a restart is still there after it (`router.config.redis_acl`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis

from router.bounds import Counters, Denial, Staged
from router.queue.redis_io import as_bytes

# KEYS[1] the command's record, KEYS[2] its fingerprint, KEYS[3..] the staged commands' keys.
# ARGV[1] the record, ARGV[2] the fingerprint, ARGV[3] their TTL, then per staged command: its
# name, the index of its key in KEYS, its argument count and its arguments.
SOURCE = """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[3]) then return {0, 0} end
local bound = redis.call('SET', KEYS[2], ARGV[2], 'NX', 'EX', ARGV[3]) and 1 or 0
local answers, at = {1, bound}, 4
while at <= #ARGV do
  local key, argc = KEYS[tonumber(ARGV[at + 1])], tonumber(ARGV[at + 2])
  answers[#answers + 1] = redis.call(ARGV[at], key, unpack(ARGV, at + 3, at + 2 + argc))
  at = at + 3 + argc
end
return answers
"""
# The writes the script may make: the claim's SETs and what the bounds and rate limits stage.
WRITES = ("set", "incrby", "expire", "zadd", "zremrangebyscore")

Parse = Callable[[Any], Any]


def _same(answer: Any) -> Any:
    return answer


def _pairs(answer: Any) -> list[tuple[bytes, float]]:
    """ZRANGE ... WITHSCORES as the script gives it (flat), as redis-py's pipeline does: pairs."""
    flat = list(answer)
    return [(as_bytes(flat[i]), float(flat[i + 1])) for i in range(0, len(flat), 2)]


class GatedCommands:
    """Commands staged to run only if the claim is won, with a pipeline's method names."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, str, tuple[Any, ...], Parse]] = []

    def __len__(self) -> int:
        return len(self.commands)

    def _add(self, name: str, key: str, *args: Any, parse: Parse = _same) -> None:
        self.commands.append((name, key, args, parse))

    def get(self, key: str) -> None:
        self._add("GET", key)

    def incr(self, key: str, amount: int = 1) -> None:
        self._add("INCRBY", key, amount)

    def expire(self, key: str, seconds: int) -> None:
        self._add("EXPIRE", key, int(seconds))

    def zremrangebyscore(self, key: str, low: float | str, high: float | str) -> None:
        self._add("ZREMRANGEBYSCORE", key, low, high)

    def zadd(self, key: str, mapping: dict[str, float]) -> None:
        self._add("ZADD", key, *[part for member, score in mapping.items() for part in (repr(score), member)])

    def zrange(self, key: str, start: int, end: int, withscores: bool = False) -> None:
        if withscores:
            self._add("ZRANGE", key, start, end, "WITHSCORES", parse=_pairs)
        else:
            self._add("ZRANGE", key, start, end)

    def zcard(self, key: str) -> None:
        self._add("ZCARD", key)

    def keys_and_args(self) -> tuple[list[str], list[Any]]:
        """The staged commands as the script takes them: their keys (each once), then per command
        its name, key index (counting the claim's two keys), argument count and arguments."""
        keys: dict[str, int] = {}
        args: list[Any] = []
        for name, key, command_args, _ in self.commands:
            index = keys.setdefault(key, len(keys) + 3)
            args += [name, index, len(command_args), *command_args]
        return list(keys), args

    def parse(self, answers: list[Any]) -> list[Any]:
        if len(answers) != len(self.commands):
            raise redis.ResponseError("the claim's script answered for another number of commands")
        return [parse(answer) for (_, _, _, parse), answer in zip(self.commands, answers, strict=True)]


class ClaimScript:
    """The script, registered once per connection (`register_script` keeps its SHA)."""

    def __init__(self, conn: redis.Redis) -> None:
        self.script = conn.register_script(SOURCE)

    def queue(self, pipe: Any, claim_keys: tuple[str, str], claim_args: tuple[str, str, int],
              gated: GatedCommands) -> tuple[list[str], list[Any]]:
        """Queue EVALSHA on the caller's pipeline; the keys and args, to send it again on NOSCRIPT."""
        keys, args = gated.keys_and_args()
        keys, args = [*claim_keys, *keys], [*claim_args, *args]
        pipe.evalsha(self.script.sha, len(keys), *keys, *args)
        return keys, args

    def answer(self, conn: redis.Redis, answer: Any, keys: list[str], args: list[Any]) -> Any:
        """The script's answer from the pipeline; after NOSCRIPT, loaded and sent again alone."""
        if isinstance(answer, redis.exceptions.NoScriptError):
            self.script.sha = str(conn.script_load(SOURCE))
            return conn.evalsha(self.script.sha, len(keys), *keys, *args)
        if isinstance(answer, Exception):
            raise answer
        return answer


class ScriptStaged(Staged[list[Any] | None]):
    """The claim's script on a pipeline: taken alone, its NOSCRIPT is answered by `ClaimScript`."""

    def take(self, conn: Counters, pipe: Any) -> list[Any] | Denial | None:
        return self.settle(conn, execute(pipe))


def execute(pipe: Any) -> list[Any]:
    """A pipeline's answers, a NOSCRIPT left in place for `ClaimScript.answer` (the reads beside
    the script are not sent twice); any other error answer raised, as `execute()` would."""
    answers: list[Any] = pipe.execute(raise_on_error=False)
    for answer in answers:
        if isinstance(answer, Exception) and not isinstance(answer, redis.exceptions.NoScriptError):
            raise answer
    return answers
