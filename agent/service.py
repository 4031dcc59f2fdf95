"""The running agent: the loop answering its channels, all in one asyncio event loop (built by
`agent.app.build_service`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

import redis

from agent.autonomy.cycle import AutonomyCycle
from agent.channels.autonomy import AutonomyChannel
from agent.channels.base import BaseChannel, IncomingMessage
from agent.commands import CommandDispatcher
from agent.config.settings import AgentSettings
from agent.daemon_threads import DaemonThreads
from agent.errors import AgentError, ConfigError, MessageNotSaved
from agent.link.approval_desk import ApprovalDesk, notice_text
from agent.link.pending_commands import ReplyCollector, collect_at_start
from agent.link.router_client import RouterClient
from agent.llm.stoppable import reply_stops
from agent.mind.loop import AgentLoop
from agent.owner.alerts import OwnerNotifier
from agent.owner.conversation_notices import OwnerNotices
from agent.status.heartbeat import AgentHeartbeat
from agent.status.report import status_lines
from protocol.ctrl_c import stop_signals

log = logging.getLogger("safeclaw.agent")
CHANNELS = ("console", "telegram", "bluesky", "autonomy")
FLUSH_EVERY = 5.0  # seconds between tries to write what a full disk refused
NOTICE_EVERY = 1.0  # seconds between looks for the router's owner notices
PROGRESS_SEND_SECONDS = 10.0  # longest wait for one progress line to reach the channel


class AgentService:
    """Owns the loop and the channels; answers each message with one turn."""

    def __init__(
        self,
        settings: AgentSettings,
        loop: AgentLoop,
        notifier: OwnerNotifier | None = None,
        conn: redis.Redis | None = None,
        make_cycle: Callable[[], AutonomyCycle] | None = None,
    ) -> None:
        self.settings = settings
        self.loop = loop
        self.conn = conn  # the process's one Redis pool (None without Redis)
        self.make_cycle = make_cycle  # the autonomy channel's cycle on this loop (`agent.app.build_cycle`)
        # The process's one way to alert the owner (`agent.app` builds it once for the loop's budget,
        # autonomy and the router's notices alike).
        telegram = settings.channels.telegram
        self.notifier = notifier or OwnerNotifier.from_settings(settings.workspace.root, telegram)
        self.channels: list[BaseChannel] = []
        self.notices = OwnerNotices(loop, lambda: self.channels)
        self.desk = build_desk(settings, loop, conn)
        self.commands = CommandDispatcher(loop, self.status_lines, self.desk)

    def status_lines(self) -> list[str]:
        return status_lines(self.settings, self.conn)

    async def handle(self, message: IncomingMessage) -> str:
        try:
            with reply_stops(message.stop):
                if message.outside_author is None:  # someone else's text is never read as a command
                    answer = await asyncio.to_thread(
                        self.commands.handle, message.conversation, message.text, self._progress_for(message)
                    )
                    if answer is not None:
                        return answer
                result = await asyncio.to_thread(
                    self.loop.run_turn, message.conversation, message.text, message.outside_author,
                    message.source,
                )
        except MessageNotSaved as exc:
            return not_saved_reply(exc)
        except AgentError as exc:
            log.error("turn failed for %s: %s", message.conversation, exc)
            return f"Sorry, something is wrong with my setup: {exc}"
        except Exception as exc:  # a bug in one turn must not end the channel (and the agent)
            log.exception("turn crashed for %s", message.conversation)
            saved = "Your message is saved" if self._recorded(message) else "Your message was NOT saved"
            return (
                f"Sorry, that failed on my side ({type(exc).__name__}; details are in the log). "
                f"{saved}; try again."
            )
        return result.reply

    def _progress_for(self, message: IncomingMessage) -> Callable[[str], None]:
        """Show a long command's progress lines in the channel the message came from, in order
        (each line is delivered before the command goes on). Progress that cannot be shown is
        logged, never a failure of the command."""
        channel = next((ch for ch in self.channels if ch.name == message.channel), None)
        event_loop = asyncio.get_running_loop()

        def show(line: str) -> None:
            log.info("%s progress: %s", message.conversation, line)
            if channel is None:
                return
            try:
                shown = channel.progress(message.conversation, line)
                asyncio.run_coroutine_threadsafe(shown, event_loop).result(PROGRESS_SEND_SECONDS)
            except Exception as exc:
                log.warning("progress not shown in %s: %s", message.channel, exc)

        return show

    def _recorded(self, message: IncomingMessage) -> bool:
        """Whether the conversation's history (on disk or kept in memory) ends with this message."""
        try:
            turns = self.loop.workspace.load_history(message.conversation)
        except Exception:
            return False
        return bool(turns) and turns[-1].get("user") == message.text

    def make_channel(self, name: str) -> BaseChannel:
        if name == "console":
            from agent.channels.console import ConsoleChannel

            return ConsoleChannel(self.handle, terminal=self.settings.channels.console.terminal)
        if name == "telegram":
            from agent.channels.telegram import TelegramChannel

            return TelegramChannel(self.handle, self.settings.channels.telegram, self)
        if name == "bluesky":
            from agent.channels.bluesky import BlueskyListener

            return BlueskyListener.from_settings(
                self.handle, self.settings.channels.bluesky, self.settings.workspace
            )
        if name == "autonomy":
            if self.make_cycle is None:
                raise ConfigError("the autonomy channel needs the agent built by agent.app.build_service")
            cycle = self.make_cycle()
            return AutonomyChannel(self.handle, cycle, self.settings.channels.autonomy.cycle_interval)
        raise ConfigError(f"unknown channel {name!r}; known: {', '.join(CHANNELS)}")

    async def run(self, channel_names: list[str], ctrl_c_before: threading.Event | None = None) -> int:
        """Run the channels (see `_run_channels`) while a heartbeat in Redis says the agent is alive.
        `ctrl_c_before`: set by a Ctrl-C that came before the channels took it (the agent leaves)."""
        asyncio.get_running_loop().set_default_executor(DaemonThreads())  # a stop never waits for a turn
        threading.Thread(target=self.warm_up, name="llm-warm-up", daemon=True).start()
        with AgentHeartbeat.from_settings(self.settings, self.conn, channel_names, self.loop.llm):
            return await self._run_channels(channel_names, ctrl_c_before)

    def warm_up(self) -> None:
        """Ready the LLM while the channels start (the embedded model evaluates its fixed prompt),
        so the owner's first message is answered quickly. A failure here only costs that speed."""
        try:
            self.loop.warm_up()
        except Exception as exc:  # the first turn reports a real problem to the owner
            log.warning("could not warm up the LLM: %s", exc)

    async def _run_channels(
        self, channel_names: list[str], ctrl_c_before: threading.Event | None = None
    ) -> int:
        """Run the channels until a signal, the end of the console's input, or no channel is left.

        Exits 2 when a channel stopped on an error (e.g. Telegram rejected the token), else 0."""
        self.channels = [self.make_channel(name) for name in channel_names]
        stop = asyncio.Event()
        event_loop = asyncio.get_running_loop()
        for signum in stop_signals():
            leave = self._ctrl_c(stop) if signum == signal.SIGINT else stop.set
            with contextlib.suppress(NotImplementedError, RuntimeError):
                event_loop.add_signal_handler(signum, leave)
        if ctrl_c_before is not None and ctrl_c_before.is_set():
            stop.set()  # the owner pressed Ctrl-C while the agent started: leave, as at the prompt
        tasks: dict[asyncio.Task[Any], BaseChannel] = {
            asyncio.create_task(ch.start(), name=ch.name): ch for ch in self.channels
        }
        failed = False
        stopper = asyncio.create_task(stop.wait())
        flusher = asyncio.create_task(self._flush_pending_writes())
        notices = asyncio.create_task(self._deliver_notices())
        collector = self.reply_collector()
        if collector is not None:  # replies to commands sent before a restart: told first
            await self._collect(collector)
        collecting = asyncio.create_task(collector.run() if collector else asyncio.sleep(0))
        running: set[asyncio.Task[Any]] = set(tasks)
        try:
            while running and not stop.is_set():
                done, _ = await asyncio.wait(running | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                for task in done - {stopper}:
                    running.discard(task)
                    if task.exception() is not None:
                        failed = True
                        log.error("channel %s stopped: %s", tasks[task].name, task.exception())
                    if tasks[task].name == "console":
                        stop.set()  # end of input (or Ctrl-D) ends the agent
        finally:
            for channel in self.channels:
                with contextlib.suppress(Exception):
                    await channel.stop()
            for task in [*tasks, stopper, flusher, notices, collecting]:
                task.cancel()
            await asyncio.gather(*tasks, stopper, flusher, notices, collecting, return_exceptions=True)
            await asyncio.to_thread(self.loop.flush_pending, False)  # not under a turn still running
            for path in self.loop.workspace.pending.paths():
                log.error("stopping with %s not saved: the disk refused it", path)
        return 2 if failed else 0

    def _ctrl_c(self, stop: asyncio.Event) -> Callable[[], None]:
        """Ctrl-C stops the console's reply under way; with none, it stops the agent."""

        def ctrl_c() -> None:
            if not any(channel.stop_reply() for channel in self.channels):
                stop.set()

        return ctrl_c

    async def _deliver_notices(self) -> None:
        """While the agent runs: the router's owner notices (approval asked, approved, denied,
        expired) to the conversation that asked, and to the owner's Telegram when configured."""
        if self.desk is None:
            return
        desk = self.desk
        notifier = self.notifier
        take = desk.in_flight  # first what a previous run took and did not deliver
        while True:
            try:
                for notice in await asyncio.to_thread(take):
                    await self._deliver(notice.conversation, notice.data, notice_text(notice.data), notifier)
                    await asyncio.to_thread(desk.delivered, notice)
                take = desk.take
            except Exception as exc:  # Redis down or a channel error: try again next period
                log.warning("owner notices: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(NOTICE_EVERY)

    async def _deliver(self, conversation: str, data: dict[str, Any], text: str, notifier: Any) -> None:
        by_name = {channel.name: channel for channel in self.channels}
        telegram: Any = by_name.get("telegram")
        targets: list[str] = []
        if conversation.split(":", 1)[0] in by_name:
            targets.append(conversation)
        if telegram is not None:
            owners = [f"telegram:{uid}" for uid in sorted(telegram.allowed)]
            targets += [target for target in owners if target not in targets]
        for target in targets:
            channel: Any = by_name[target.split(":", 1)[0]]
            try:
                if channel is telegram:
                    await telegram.send_notice(target, data, text)
                else:
                    await channel.send(target, text)
            except Exception as exc:
                log.warning("could not tell the owner in %s: %s", target, exc)
        if telegram is None:
            await asyncio.to_thread(notifier.notify, "approval", text)

    def reply_collector(self) -> ReplyCollector | None:
        router = self.loop.router
        if not isinstance(router, RouterClient) or router.outbox is None:
            return None
        return ReplyCollector(router.outbox, router, self.tell_owner)

    async def _collect(self, collector: ReplyCollector) -> None:
        await collect_at_start(collector)

    async def tell_owner(self, conversation: str, text: str) -> None:
        """A message of the agent's own in `conversation`: kept in its history, sent on its channel."""
        await self.notices.tell(conversation, text)

    async def _flush_pending_writes(self) -> None:
        """While the agent runs: write what a full disk refused as soon as there is room."""
        while True:
            await asyncio.sleep(FLUSH_EVERY)
            if self.loop.workspace.pending:
                await asyncio.to_thread(self.loop.flush_pending)


def not_saved_reply(exc: MessageNotSaved) -> str:
    """The honest answer when the owner's message could not be written."""
    return (
        f"Your message was NOT saved: {exc.reason} (writing {exc.path}). I keep it in memory and "
        "will write it as soon as there is room; I did not act on it. Free some space, then send it "
        "again if you need an answer."
    )


def build_desk(settings: AgentSettings, loop: AgentLoop, conn: redis.Redis | None) -> Any:
    """The approval desk (owner notices, decisions typed in a chat) on the process's pool, or None
    without Redis."""
    if conn is None:
        return None
    desk = ApprovalDesk(conn, settings.keys, loop.router)
    if isinstance(loop.router, RouterClient):
        loop.router.on_held = desk.note_held  # /approvals knows a held command at once
    return desk


def enabled_channels(settings: AgentSettings) -> list[str]:
    return settings.channels.enabled() or ["console"]
