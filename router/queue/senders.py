"""Whose words comes from the login, not the envelope.

Each Redis login that may send commands (`protocol.keys.SENDING_LOGINS`) has its own queue, which
the ACL lets only that login push to (`router.config.redis_acl`), and its own replies, which only it
may read. The router takes a command from one of those queues and so knows which login queued
it: the origin the command runs under (`protocol.origin`) is the one that login may send, attached
to the command here, never the envelope's word alone.

- A login with one fixed origin (`mcp`: the owner's path `mcp` with the client's unknown reading
  as taint, `router.mcp.origin.MCP_ORIGIN`) may send that origin only. An envelope on its queue
  that says anything else (the owner at the console, autonomy, `mcp` without the taint, owner
  words that would let a write through, no origin at all) is refused.
- The agent's login may send every origin the agent's loop states, except a path that is another
  login's fixed origin (`via: mcp`): that path means "from that login" to the owner and the audit.

A refused command is dead-lettered with the reason and answered on its sender's replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from protocol.commands import CommandEnvelope
from protocol.keys import MCP_LOGIN, SENDING_LOGINS, Keys
from protocol.origin import Origin
from router.mcp.origin import MCP_ORIGIN

ORIGIN_REFUSED = "origin_refused"  # the error of a command whose origin its login may not send
FIXED_ORIGINS = {MCP_LOGIN: MCP_ORIGIN}  # logins that may send one origin only


class OriginRefused(ValueError):
    """The command states an origin its queue's login may not send."""


@dataclass(frozen=True)
class Sender:
    """A login that queues commands: its queue, its replies, and the one origin it may send (None:
    any the agent's loop states that is not another login's)."""

    login: str
    queue: str
    reply_prefix: str
    only_origin: Origin | None = None

    def reply_key(self, command_id: str) -> str:
        return f"{self.reply_prefix}{command_id}"


def senders_of(keys: Keys) -> tuple[Sender, ...]:
    """Every sending login, the agent's first (the queue a router's main loop takes)."""
    return tuple(
        Sender(login, keys.command_queue_of(login), keys.response_prefix_of(login), FIXED_ORIGINS.get(login))
        for login in SENDING_LOGINS
    )


def with_sender_origin(
    envelope: CommandEnvelope, sender: Sender, senders: Sequence[Sender]
) -> CommandEnvelope:
    """The command with the origin its login may send attached; OriginRefused when the envelope
    states one that login may not send."""
    stated = envelope.origin
    if sender.only_origin is not None:
        if stated != sender.only_origin:
            raise OriginRefused(
                f"the {sender.login} login may send only the origin {_said(sender.only_origin)}; "
                f"this command said {_said(stated)}, so it was not run"
            )
        return replace(envelope, origin=sender.only_origin)
    others = {s.only_origin.via: s.login for s in senders if s.only_origin is not None and s is not sender}
    if stated is not None and stated.via in others:
        raise OriginRefused(
            f"the {sender.login} login may not send the path {stated.via!r}: it is the "
            f"{others[stated.via]} login's, so the command was not run"
        )
    return envelope


def sender_of(origin: Origin | None, senders: Sequence[Sender]) -> Sender:
    """The login a command with this (router-attached) origin came from: the one whose fixed
    origin it is, else the agent's. For a held command run later, whose replies it goes to."""
    for sender in senders:
        if sender.only_origin is not None and origin == sender.only_origin:
            return sender
    return next(s for s in senders if s.only_origin is None)


def _said(origin: Origin | None) -> str:
    if origin is None:
        return "no origin"
    shown = f"{origin.kind} via {origin.via}"
    if not origin.taint:
        shown += " with nothing read"
    if origin.owner_words:
        shown += " carrying the owner's words"
    return shown
