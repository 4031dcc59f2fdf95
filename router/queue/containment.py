"""One containment around every step that handles one item (a queue item, a held approval).

Whatever the step raises, short of Redis being unavailable, the item is set aside with its
reason and the router goes on: the exception's type is not looked at (a list of types is the
guard the next item gets past), nor is its value trusted (a message that cannot be formatted,
or one holding a 5,000-digit number, still gives a bounded reason). Redis being unavailable is
the one thing an item step does not contain: the item stays where it is (in this router's
processing list, or its taken approvals) and recovery takes it up again when Redis answers.
When setting the item aside fails on Redis too, Redis is not taking writes: unavailable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import redis

from protocol import ctrl_c
from router.errors import describe
from router.queue.redis_io import REDIS_DOWN, RedisRefused

log = logging.getLogger("safeclaw.router.worker")
T = TypeVar("T")


def contain(step: Callable[[], T], set_aside: Callable[[str], object], what: str) -> T | None:
    """Run `step`; on any failure except Redis being unavailable, log it, call `set_aside(reason)`
    and return None. A set-aside that fails on Redis raises `RedisRefused` (unavailable); one that
    fails otherwise is logged and the item is left to the caller's last resort."""
    try:
        return step()
    except REDIS_DOWN:
        raise
    except BaseException as exc:  # a skill's SystemExit or KeyboardInterrupt is the item's too
        if ctrl_c.leaving():  # the program's own Ctrl-C (the one-shot tool): it ends, as asked
            raise
        reason = describe(exc)
        log.error("%s failed (%s); setting it aside", what, reason, exc_info=True)
    try:
        set_aside(reason)
    except REDIS_DOWN:
        raise
    except redis.RedisError as exc:
        raise RedisRefused("SETASIDE", f"cannot set {what} aside: {describe(exc)}") from exc
    except BaseException as exc:
        log.error("cannot set %s aside (%s)", what, describe(exc), exc_info=True)
    return None
