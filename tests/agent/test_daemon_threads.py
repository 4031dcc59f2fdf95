"""agent/daemon_threads.py: what `asyncio.to_thread` runs comes back as usual, and a stop never
waits for a call still running."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from agent.daemon_threads import DaemonThreads

ASKED_BY: contextvars.ContextVar[str] = contextvars.ContextVar("asked_by", default="nobody")


def test_results_exceptions_and_context_come_back_as_with_to_thread():
    async def main() -> tuple[str, str]:
        asyncio.get_running_loop().set_default_executor(DaemonThreads())
        ASKED_BY.set("owner")
        seen = await asyncio.to_thread(lambda: f"{ASKED_BY.get()} on a daemon thread: "
                                               f"{threading.current_thread().daemon}")
        with pytest.raises(ValueError, match="refused"):
            await asyncio.to_thread(lambda: (_ for _ in ()).throw(ValueError("refused")))
        return seen, "done"

    assert asyncio.run(main()) == ("owner on a daemon thread: True", "done")


def test_the_loop_stops_without_waiting_for_a_call_still_running():
    never_set = threading.Event()
    started = threading.Event()

    def waits_for_ever() -> None:
        started.set()
        never_set.wait()

    async def main() -> str:
        asyncio.get_running_loop().set_default_executor(DaemonThreads())
        call = asyncio.ensure_future(asyncio.to_thread(waits_for_ever))
        await asyncio.to_thread(started.wait)
        call.cancel()
        return "stopped"

    assert asyncio.run(main()) == "stopped"  # a thread pool would wait here for ever
    assert started.is_set() and not never_set.is_set()
    never_set.set()  # let the abandoned thread end with the test
