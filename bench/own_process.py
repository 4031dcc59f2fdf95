"""A platform fake in a process of its own, for benches: in the bench's process its server threads
would share a GIL with the client being measured, and slow the floor as much as the router."""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FakeAddress:
    url: str


def _serve_mastodon(token: str, urls: Any, stop: Any) -> None:
    from tests.support.fake_mastodon import FakeMastodon

    fake = FakeMastodon(token=token)
    fake.start()
    urls.put(fake.url)
    stop.wait()
    fake.stop()


@contextlib.contextmanager
def mastodon_in_its_own_process(token: str) -> Iterator[FakeAddress]:
    """The Mastodon fake (tests/support/fake_mastodon.py) served by a spawned process: its URL."""
    context = multiprocessing.get_context("spawn")
    urls, stop = context.Queue(), context.Event()
    process = context.Process(target=_serve_mastodon, args=(token, urls, stop), daemon=True)
    process.start()
    try:
        yield FakeAddress(urls.get(timeout=60))
    finally:
        stop.set()
        process.join(timeout=30)
        if process.is_alive():
            process.terminate()
