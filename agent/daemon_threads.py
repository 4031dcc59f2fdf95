"""The agent's event loop runs its blocking work (a turn waiting for a model's answer, a command, a
notice written to the workspace) each on a daemon thread of its own, and never waits for them when
it stops. With a thread pool, asyncio.run and then the interpreter waited for every such thread: a
Ctrl-C (or SIGTERM, or a closed terminal) during a slow answer left the agent hanging until the
model answered, and the stack's runner had to kill it.

What an abandoned turn had sent to the router is in `pending_commands.json`, collected at the next
start; a write it had begun is atomic (its temp file is removed at the next start); the embedded
model stops at its next batch (`agent/llm/local/llama_models.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonThreads(ThreadPoolExecutor):
    """`loop.set_default_executor(DaemonThreads())`: what `asyncio.to_thread` runs then runs on a
    daemon thread, and the loop's shutdown does not wait for it."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to whoever awaits the future
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="agent-work", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: a thread still running is abandoned with the process."""
