"""HTTP failures of any platform client mapped to `SkillError` kinds, with safe messages.

401/403 → auth_failed; 429 → rate_limited (with the retry-after when the server gave one);
timeouts, 5xx and connection errors → request_failed (one this machine's network causes says
so: protocol.reach); anything else → internal_error. A message names the platform and the status
only: never a response body, a URL with a query, an exception's text (libraries put response
bodies there) or a credential.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from protocol import reach
from protocol.platform_names import PLATFORM_NAMES
from router.errors import SkillError

# Seconds since the epoch above this are a reset *time*; below it, a number of seconds.
_EPOCH_THRESHOLD = 1_000_000_000


def _seconds_from_value(value: str, now: float) -> float | None:
    """Seconds to wait, from a delay in seconds, an epoch timestamp, an HTTP-date or ISO 8601."""
    value = value.strip()
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if math.isfinite(number):
        return max(number - now, 0.0) if number > _EPOCH_THRESHOLD else max(number, 0.0)
    for parse in (parsedate_to_datetime, datetime.fromisoformat):
        try:
            moment = parse(value.replace("Z", "+00:00") if parse is datetime.fromisoformat else value)
        except (TypeError, ValueError, IndexError):
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return max(moment.timestamp() - now, 0.0)
    return None


def retry_after_seconds(headers: Mapping[str, Any] | None, now: float | None = None) -> float | None:
    """The wait a 429 response asks for: `retry-after`, else a `*ratelimit-reset` header."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    now = time.time() if now is None else now
    for name in ("retry-after", "x-rate-limit-reset", "x-ratelimit-reset", "ratelimit-reset"):
        if name in lowered:
            seconds = _seconds_from_value(lowered[name], now)
            if seconds is not None:
                return round(seconds, 3)
    return None


def error_for_status(
    platform: str, status: int, headers: Mapping[str, Any] | None = None, doing: str = "request"
) -> SkillError:
    """The SkillError for an HTTP error status of `platform` while `doing` something."""
    platform = PLATFORM_NAMES.get(platform, platform)  # as people name it: "Bluesky", not "bsky"
    if status in (401, 403):
        return SkillError("auth_failed", f"{platform} rejected the credentials ({status}) during {doing}; "
                          "check the platform's variables in router/.env")
    if status == 429:
        wait = retry_after_seconds(headers)
        hint = f"; retry after {wait:g} s" if wait is not None else ""
        return SkillError("rate_limited", f"{platform} rate limit hit during {doing}{hint}", retry_after=wait)
    if status == 404:
        return SkillError("not_found", f"{platform} found nothing for this {doing} (404)")
    if status == 408 or 500 <= status <= 599:
        return SkillError("request_failed", f"{platform} failed the {doing} (HTTP {status}); try again later")
    return SkillError("internal_error", f"{platform} refused the {doing} (HTTP {status})")


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError | socket.timeout):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TimeoutException", "Timeout", "ReadTimeout", "ConnectTimeout",
                         "InvokeTimeoutError"})


def _is_connection_error(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TransportError", "NetworkError", "ConnectionError", "RequestError"})


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in chain and len(chain) < 10:
        chain.append(node)
        node = node.__cause__ or node.__context__
    return chain


def _response_of(exc: BaseException) -> tuple[int, Mapping[str, Any] | None] | None:
    """(status, headers) of an exception carrying an HTTP response (httpx, requests, ...)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int):
        return status, getattr(response, "headers", None)
    return None


def error_from_exception(exc: BaseException, platform: str, doing: str = "request") -> SkillError:
    """The SkillError for whatever a client library raised. Never includes `str(exc)`."""
    for link in _causes(exc):  # ours, raised inside an SDK's transport (`before_write`) and wrapped by it
        if isinstance(link, SkillError):
            return link
    platform = PLATFORM_NAMES.get(platform, platform)
    for link in _causes(exc):
        response = _response_of(link)
        if response is not None:
            return error_for_status(platform, response[0], response[1], doing)
    chain = _causes(exc)
    if any(_is_timeout(link) for link in chain):
        return SkillError("request_failed", f"{platform} did not answer the {doing} in time")
    if any(_is_connection_error(link) for link in chain):
        why = reach.why_unreachable(chain)  # this machine's side: offline, no name server, no route
        if why == reach.NO_NETWORK:
            return SkillError("request_failed", f"{why}, so {platform} cannot be reached")
        if why:
            return SkillError("request_failed", f"{platform} cannot be reached: {why}")
        return SkillError("request_failed", f"could not reach {platform} for the {doing}")
    return SkillError("internal_error", f"{platform} {doing} failed unexpectedly ({type(exc).__name__})")
