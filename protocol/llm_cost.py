"""Which LLM costs nothing: the embedded model runs on this machine, so status and the dashboard
show no money budget for it (a "$0.00 of $2.00" would suggest it is paid for)."""

from __future__ import annotations

FREE_PROVIDERS = frozenset({"local"})
FREE_WORDS = "the embedded model runs on this machine and is free: no money is spent"


def is_free(provider: object) -> bool:
    return provider in FREE_PROVIDERS
