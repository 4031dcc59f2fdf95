"""Platform clients by key, imported lazily so an unused platform costs nothing at start-up.

Every platform client (and Bluesky's public AppView client, `bsky_appview.on_appview`) is kept by the
thread that made it (a router's lane thread) for that thread's next commands on its platform, with
the same credentials and settings: its login, its instance facts (a Mastodon instance's length
limit) and its open connection are not made again per command. Each thread keeps its own, because
the SDKs' sessions are not safe to share between two commands at once and `router.queue.hangup`
hangs up a kept connection at a command's deadline by the thread it runs in. A kept client is built
lazily, built anew when the credentials or settings change, dropped (and closed) after an error
that may have left its connection or session broken (`forget`), and every kept one is closed at the
router's shutdown (`close_kept`).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, cast

from protocol.hidden import HiddenValues
from router.errors import SkillError
from router.platforms.base import PlatformClient
from router.registry import SkillContext

log = logging.getLogger("safeclaw.router.platforms")

PLATFORM_CLASSES: dict[str, str] = {
    "bsky": "router.platforms.bsky:BlueskyClient",
    "mastodon": "router.platforms.mastodon:MastodonClient",
    "reddit": "router.platforms.reddit:RedditClient",
    "x": "router.platforms.x:XClient",
    "moltbook": "router.platforms.moltbook:MoltbookClient",
}
# After these the client is built anew: its connection may be half-used or hung up (a deadline),
# its session refused or expired, or the SDK failed in a way that may have left it half-changed
# (`router.skills.social_common.on_platform` drops it).
REBUILD_AFTER = frozenset({"request_failed", "auth_failed", "internal_error", "login_required"})


def platform_class(platform: str) -> type[PlatformClient]:
    target = PLATFORM_CLASSES.get(platform)
    if target is None:
        known = ", ".join(sorted(PLATFORM_CLASSES))
        raise SkillError("unknown_platform", f"unknown platform {platform!r}; known: {known}")
    module_name, class_name = target.split(":")
    cls: type[PlatformClient] = getattr(importlib.import_module(module_name), class_name)
    return cls


class Keepable(Protocol):
    """What a kept client has: a platform client, or the SDK client of a public read API."""

    key: str

    def retime(self, timeout: float) -> None: ...

    def close(self) -> None: ...


K = TypeVar("K", bound=Keepable)


@dataclass
class _Kept:
    same: object = field(repr=False)  # the credentials and settings it was built with
    client: Keepable
    generation: int  # `close_kept` ends every client of an older generation


_local = threading.local()
_clients: dict[int, Keepable] = {}  # every thread's kept clients, to close them at shutdown
_lock = threading.Lock()
_generation = 0


def _thread_kept() -> dict[str, _Kept]:
    kept: dict[str, _Kept] = _local.__dict__.setdefault("clients", {})
    return kept


def _close(client: Keepable) -> None:
    with _lock:
        _clients.pop(id(client), None)
    try:
        client.close()
    except Exception:  # a broken connection may fail to close; it is dropped either way
        log.debug("closing a %s client failed", client.key, exc_info=True)


def kept(slot: str, same: object, timeout: float, build: Callable[[], K]) -> K:
    """This thread's client in `slot` if it was built with `same` (retimed to `timeout`), else
    one built now (and kept in its place)."""
    kept_here = _thread_kept()
    found = kept_here.get(slot)
    if found is not None and found.same == same and found.generation == _generation:
        found.client.retime(timeout)
        return cast(K, found.client)
    if found is not None:
        del kept_here[slot]
        _close(found.client)
    client = build()
    with _lock:
        kept_here[slot] = _Kept(same, client, _generation)
        _clients[id(client)] = client
    return client


def client_for(platform: str, ctx: SkillContext) -> PlatformClient:
    """This thread's client for `platform` (kept, or built now), or SkillError(no_credentials /
    unknown_platform)."""
    cls = platform_class(platform)
    same = (HiddenValues(ctx.credentials), HiddenValues(ctx.env))  # compared whole, never printed
    return kept(platform, same, ctx.timeout, lambda: cls(ctx.credentials, ctx.env, ctx.timeout))


def forget(slot: str, client: Keepable) -> None:
    """Drop this thread's kept client in `slot` (if it is `client`) and close it."""
    kept_here = _thread_kept()
    found = kept_here.get(slot)
    if found is not None and found.client is client:
        del kept_here[slot]
    _close(client)


def drop(slot: str) -> None:
    """Close this thread's kept client in `slot`, if any: the next call builds (and logs in) anew."""
    found = _thread_kept().pop(slot, None)
    if found is not None:
        _close(found.client)


def close_kept() -> int:
    """Close every client any thread keeps (the router is stopping); how many were open. A
    thread that runs a command afterwards builds a new one."""
    global _generation
    with _lock:
        _generation += 1
        clients = list(_clients.values())
    for client in clients:
        _close(client)
    return len(clients)
