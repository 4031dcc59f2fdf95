"""Router commands in flight survive a restart: recorded before sending, answered after.

`PendingCommands` keeps `workspace/pending_commands.json` (written atomically, before the
command is pushed): the id, action, params, conversation and expiry of every command sent and
not yet answered. An answered one is removed. `ReplyCollector` runs in the agent: at start (and
every few seconds) it picks up the replies of commands no call is waiting on any more (the agent
was killed, or the call timed out as `unknown`) and tells the owner in the conversation that
asked: "The post you asked for before the restart: sent, https://…".
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from agent.errors import NotSavedError
from agent.workspace.folder import Workspace
from protocol.commands import CommandEnvelope
from protocol.untrusted import sanitise_text

log = logging.getLogger("safeclaw.agent.pending")
STORE_FILE = "pending_commands.json"
GIVE_UP_AFTER = 600.0  # seconds past a command's expiry without a reply: its outcome stays unknown
COLLECT_EVERY = 2.0  # seconds between passes while the agent runs
WHAT = {
    "CREATE_POST": "post",
    "REPLY": "reply",
    "LIKE": "like",
    "DELETE_POST": "deletion",
    "FOLLOW": "follow",
}


class PendingCommands:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.path = workspace.root / STORE_FILE
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time, across the processes sharing the workspace (chat, `autonomy once`)."""
        with self._lock:
            try:
                handle = (self.workspace.root / f".{STORE_FILE}.lock").open("a")
            except OSError:  # an unwritable workspace: the write itself says so
                yield
                return
            with handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                yield

    def entries(self) -> dict[str, dict[str, Any]]:
        data = self.workspace.state_file(self.path, {})
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def add(self, envelope: CommandEnvelope) -> None:
        """Record the command before it is sent; NotSavedError (and it is not sent) if that fails.
        A command that could not be recorded is rolled back too: it is not sent, so nothing may later
        report its outcome as unknown."""
        with self._locked():
            before = self.entries()
            data = dict(before)
            data[envelope.id] = {
                "pid": os.getpid(),  # a live process that sent it may still be waiting for its reply
                "pid_started": process_start(os.getpid()),  # so a reused pid is not mistaken for it
                "action": envelope.action,
                "params": envelope.params,
                "conversation": envelope.conversation,
                "created_at": envelope.created_at,
                "expires_at": envelope.expires_at,
            }
            try:
                self.workspace.pending.write(self.path, data)
            except NotSavedError:
                with contextlib.suppress(NotSavedError):  # the state before it, kept until the disk takes it
                    self.workspace.pending.write(self.path, before)
                raise

    def remove(self, command_id: str) -> None:
        """Forget an answered command. Not synced: a power cut that undoes it leaves a record whose
        reply was taken, and the collector tells the owner its outcome is unknown, which is true of
        what the agent then knows (the owner saw the outcome before). The last one is forgotten by
        deleting the file: a rename over it would push its blocks to the disk (ext4's
        auto_da_alloc), the costliest step of a turn not meant to be durable."""
        with self._locked():
            data = self.entries()
            if data.pop(command_id, None) is None:
                return
            if not data:
                self.workspace.pending.forget(self.path)  # nothing left to write, whatever waited
                try:
                    self.path.unlink(missing_ok=True)
                    return
                except OSError:  # a read-only workspace: the write below says so, and keeps it
                    pass
            self.workspace.pending.write(self.path, data, durable=False)


class ReplySource(Protocol):
    in_flight: set[str]  # ids a call is waiting on right now: their replies are the call's

    def collect_reply(self, command_id: str) -> dict[str, Any] | None: ...


def process_start(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, from /proc); None where that is unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def waited_on_elsewhere(entry: dict[str, Any]) -> bool:
    """Another live agent process sent it (and may be waiting for its reply): not ours to take.
    A process that only has the sender's pid (reused after a restart or a reboot) is not it."""
    pid = entry.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
        return False
    started = entry.get("pid_started")
    if isinstance(started, int) and process_start(pid) not in (None, started):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def outcome(entry: dict[str, Any], reply: dict[str, Any] | None, restarted: bool) -> str:
    """One line for the owner about a command whose answer came late (or never)."""
    what = WHAT.get(str(entry.get("action")), str(entry.get("action")))
    when = "before the restart" if restarted else "earlier"
    head = f"The {what} you asked for {when}"
    if reply is None:
        return f"{head}: no answer from the router in time; outcome unknown (check the platform)."
    status = str(reply.get("status"))
    if status == "ok":
        result = reply.get("result")
        url = (result.get("url") or result.get("uri") or "") if isinstance(result, dict) else ""
        return f"{head}: sent" + (f", {sanitise_text(str(url), 500).text}" if url else "") + "."
    message = sanitise_text(str(reply.get("message") or reply.get("error") or ""), 300).text
    return f"{head}: {status}" + (f" ({message})" if message else "") + "."


class ReplyCollector:
    def __init__(
        self,
        store: PendingCommands,
        source: ReplySource,
        tell: Callable[[str, str], Awaitable[None]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.source = source
        self.tell = tell
        self.clock = clock
        self.before_restart = set(store.entries())  # what was out when this agent started
        # A reply is taken from Redis once: kept here until the owner is told, whatever fails.
        self._collected: dict[str, dict[str, Any] | None] = {}
        self._told: set[str] = set()  # told; their record is removed when the disk allows

    async def collect_once(self) -> int:
        """Tell the owner about every pending command whose reply is here (or never will be)."""
        told = 0
        for command_id, entry in self.store.entries().items():
            if command_id in self._told:
                self._forget(command_id)
                continue
            if command_id in self.source.in_flight or waited_on_elsewhere(entry):
                continue
            if command_id not in self._collected:
                reply = await asyncio.to_thread(self.source.collect_reply, command_id)
                if reply is None and self.clock() < float(entry.get("expires_at") or 0) + GIVE_UP_AFTER:
                    continue  # the router may still answer
                self._collected[command_id] = reply
            text = outcome(entry, self._collected[command_id], command_id in self.before_restart)
            try:
                await self.tell(str(entry.get("conversation") or "console"), text)
            except Exception:
                log.warning("could not tell the owner %r yet; trying again", text, exc_info=True)
                continue
            self._told.add(command_id)
            del self._collected[command_id]
            self._forget(command_id)
            told += 1
        self._told &= set(self.store.entries())  # forgotten on disk too: nothing left to do for them
        return told

    def _forget(self, command_id: str) -> None:
        try:
            self.store.remove(command_id)
        except NotSavedError as exc:  # kept in memory and written when there is room
            log.warning("the record of command %s stays on disk for now: %s", command_id, exc)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(COLLECT_EVERY)
            try:
                await self.collect_once()
            except Exception:  # Redis down, a disk error: try again next pass
                log.warning("collecting late router replies failed; trying again", exc_info=True)


async def collect_at_start(collector: ReplyCollector) -> None:
    """The first pass, before the channels run; Redis down is retried by `collector.run()`."""
    try:
        await collector.collect_once()
    except Exception:
        log.warning("cannot collect the replies of commands sent before the restart yet", exc_info=True)
