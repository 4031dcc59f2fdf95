"""Slash commands: what the owner can ask for in any channel, with any provider, without the model.

A command that acts (`/post`, `/like`, `/remember`, …) is turned into the same `Action` objects the
model writes, validated by the same parser and run by `AgentLoop.run_actions`, which executes
them exactly as a model turn does: local actions in the agent, the rest through the router with its
policy, dry run, audit log and approvals. Only the owner's own messages are read as commands; a
message someone else wrote (`outside_author`) is never one.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.commands.describe import describe_results
from agent.commands.parse import (
    PLATFORMS,
    CommandBuilders,
    CommandSpec,
    CommandUsageError,
    split_command,
)
from agent.cost.metered import cost_label
from agent.explain.command import explain_reply, plain_explain_address
from agent.link.origin import Speaking, explain_origin, owner_messages
from agent.workspace.memory import MemoryRefused, is_public

if TYPE_CHECKING:
    from agent.mind.loop import AgentLoop

__all__ = ["COMMAND_NAMES", "PLATFORMS", "CommandDispatcher", "CommandUsageError", "command_specs"]

StatusLines = Callable[[], list[str]]
NO_APPROVALS = "Approvals need the router (REDIS_URL); use the dashboard or ./safeclaw approvals."
ELSEWHERE = "Decide what /approvals lists on the dashboard, or with ./safeclaw approve <id> / deny <id>."
CHAT_DECISIONS = ("approve", "deny")
Progress = Callable[[str], None]


def command_specs(builders: CommandBuilders | None = None) -> list[CommandSpec]:
    """Every command, in the order /help lists them. Without builders: names and usage only."""
    b = builders
    return [
        CommandSpec("post", "<platform> <text>", "publish a post", b.post if b else None),
        CommandSpec("reply", "[platform] <post URL> <text>", "reply to a post", b.reply if b else None),
        CommandSpec("like", "[platform] <post URL>", "like a post", b.like if b else None),
        CommandSpec("delete", "[platform] <post URL>", "delete one of your posts", b.delete if b else None),
        CommandSpec(
            "notifications", "<platform>", "recent mentions, replies, likes", b.notifications if b else None
        ),
        CommandSpec("search", "<words>", "search public Bluesky posts", b.search if b else None),
        CommandSpec("remember", "<key> = <value>", "remember a fact", b.remember if b else None),
        CommandSpec("forget", "<key>", "forget a remembered fact", b.forget if b else None),
        CommandSpec("memory", "", "show what I remember"),
        CommandSpec("public", "<key>", "let messages others wrote (Bluesky, forwards, autonomy) see a fact"),
        CommandSpec("private", "<key>", "make a public fact private again (the default)"),
        CommandSpec("browse", "<url>", "open a web page and summarise it", b.browse if b else None),
        CommandSpec("approvals", "", "the router's commands waiting for your decision"),
        CommandSpec("approve", "<id>", "run a held command (once)"),
        CommandSpec("deny", "<id>", "never run a held command"),
        CommandSpec("explain", "<post URL>", "explain a Bluesky post with cited background"),
        CommandSpec("status", "", "LLM, Redis and router status"),
        CommandSpec("clear", "", "forget this conversation's history"),
        CommandSpec("help", "", "list the commands"),
    ]


COMMAND_NAMES: tuple[str, ...] = tuple(spec.name for spec in command_specs())


class CommandDispatcher:
    """Answers slash commands for one agent loop; `handle()` returns None for anything else."""

    def __init__(self, loop: AgentLoop, status_lines: StatusLines | None = None, desk: Any = None) -> None:
        self.loop = loop
        self.status_lines = status_lines
        self.desk = desk  # the ApprovalDesk (agent.link.approval_desk); None without Redis

    def specs(self) -> dict[str, CommandSpec]:
        # Built per command: the catalogues are workspace files the owner may edit while it runs.
        builders = CommandBuilders(self.loop.action_schemas())
        return {spec.name: spec for spec in command_specs(builders)}

    def handle(self, conversation: str, text: str, progress: Progress | None = None) -> str | None:
        """The answer to a command, or None for a message meant for the model. `progress` receives
        lines to show while a long command (/explain) works."""
        if text.strip().lower() in ("help", "?"):  # what a person types first, slash or not
            text = "/help"
        split = split_command(text)
        if split is None:
            address = plain_explain_address(text)  # "explain <post URL>" needs no slash
            if address is None:
                return None
            split = ("explain", address)
        name, args = split
        if name == "explain":
            return self.explain(conversation, args, progress)
        if name == "start":  # Telegram sends /start when a chat with the bot opens
            name = "help"
        specs = self.specs()
        spec = specs.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, [*specs, "explain"], n=1, cutoff=0.7)
            if close:
                return f"I don't know the command /{name}. Did you mean /{close[0]}? (/help lists them all)"
            return f"I don't know the command /{name}. {self.help_text(specs, self.chat_decides())}"
        try:
            if spec.build is not None:
                actions = spec.build(args)
                return self.loop.run_actions(conversation, text.strip(), actions, describe_results)
            if spec.name in ("approve", "deny"):
                return self.decide(spec, args, conversation)
            if spec.name in ("public", "private"):
                return self.share(spec, args)
            return self.view(spec, args, conversation, specs)
        except CommandUsageError as exc:
            return str(exc)

    def explain(self, conversation: str, args: str, progress: Progress | None) -> str:
        """/explain: the post explainer, reading through the router's public skills."""
        origin = explain_origin(args)
        said = owner_messages(self.loop.workspace.load_history(conversation), None)
        with cost_label(f"{conversation}:explain"):
            return explain_reply(args, Speaking(self.loop.router, origin), self.loop.llm, progress, said)

    def view(self, spec: CommandSpec, args: str, conversation: str, specs: dict[str, CommandSpec]) -> str:
        """The commands that only show or clear agent-side state; they take no arguments."""
        if args:
            raise CommandUsageError(f"Usage: {spec.usage} (it takes no arguments)")
        if spec.name == "help":
            return self.help_text(specs, self.chat_decides())
        if spec.name == "clear":
            self.loop.clear_history(conversation)
            return "Done: I forgot this chat's history."
        if spec.name == "memory":
            return self.memory_text()
        if spec.name == "approvals":
            if self.desk is None:
                return NO_APPROVALS
            lines = self.desk.pending_lines()
            if self.desk.waiting() and not self.chat_decides():
                lines.append(ELSEWHERE.replace("what /approvals lists", "them"))
            return "\n".join(lines)
        if spec.name == "status":
            lines = self.status_lines() if self.status_lines else ["status is not available here"]
            return "\n".join(lines)
        raise AssertionError(f"no view for /{spec.name}")

    def decide(self, spec: CommandSpec, args: str, conversation: str) -> str:
        """The owner's decision, relayed with the router's one-time code (never by the model)."""
        if len(args.split()) != 1:
            raise CommandUsageError(f"Usage: {spec.usage} (the id /approvals shows)")
        if self.desk is None:
            return NO_APPROVALS
        return str(self.desk.decide(args.strip(), spec.name, conversation))

    def share(self, spec: CommandSpec, args: str) -> str:
        """/public and /private: which of the owner's facts a turn someone else wrote may see."""
        key = args.strip()
        if not key:
            raise CommandUsageError(f"Usage: {spec.usage} (/memory lists the keys)")
        public = spec.name == "public"
        try:
            self.loop.set_memory_public(key, public)
        except MemoryRefused as exc:
            return f"Not changed: {exc}."
        if public:
            return (
                f"{key!r} is now public: turns others wrote (Bluesky mentions, forwards, autonomy) "
                "can see it. "
                f"/private {key} undoes it; a new value makes it private again."
            )
        return f"{key!r} is private again: only your own messages can see it."

    def memory_text(self) -> str:
        memory = self.loop.workspace.load_memory()
        if not memory:
            return "I remember nothing yet. Teach me with /remember <key> = <value>."
        lines = []
        for key, entry in memory.items():
            value = entry.get("value") if isinstance(entry, dict) and "value" in entry else entry
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            public = " (public)" if is_public(entry) else ""
            lines.append(f"- {key} = {shown}{public}")
        return "What I remember:\n" + "\n".join(lines)

    def chat_decides(self) -> bool:
        """Whether /approve and /deny can work here: only when the router handed a one-time code
        for a decision typed in a chat (ROUTER_CHAT_APPROVALS, off by default)."""
        return self.desk is not None and bool(self.desk.takes_chat_decisions())

    @staticmethod
    def help_text(specs: dict[str, CommandSpec], chat_decides: bool = False) -> str:
        """Only what works here: /approve and /deny only where the router takes a chat's decision."""
        shown = [spec for spec in specs.values() if chat_decides or spec.name not in CHAT_DECISIONS]
        lines = [f"{spec.usage} — {spec.summary}" for spec in shown]
        if not chat_decides:
            lines.append(ELSEWHERE)
        return (
            "Commands (they need no model, and go through the router's rules like everything I do):\n"
            + "\n".join(lines)
            + f"\nPlatforms: {', '.join(PLATFORMS)}. Anything else you write goes to the language model."
        )
