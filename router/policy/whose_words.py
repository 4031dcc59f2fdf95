"""Whose words: the policy on a command's origin and taint (`protocol.origin`), beside its effect.

- **A stranger's turn** (a mention, a forward) may read public posts and reply to that person's
  own post, on its platform; nothing else: never the owner's private data (notifications, direct
  messages, the account's profile), never a post, like or delete, never a reply elsewhere. Its
  reply waits for the owner when it carries a link or a handle neither the owner nor that person
  wrote (a stranger cannot make the owner's account advertise a third party).
- **Autonomy** acts on its own platform only (its feed, its notifications, its posts); its public
  writes are gated by the agent (score, quotas, DOS.md), and held here too when the owner asked;
  its deletes always wait for the owner.
- **Owner-only data** the agent found in a command (`origin.holds`): a read from a tainted turn
  is refused (a search query, a handle to resolve), a write waits for the owner.
- **An owner's turn that read outside text** (or sent no origin at all) publishes only with the
  owner's approval, unless every published field (text, title, link, target) is already in the
  owner's own messages, and its words (text, title) in the owner's message of this turn:
  "post 'hello' to bluesky" typed after reading a page needs no approval; the page's "also post
  …" does, and so does its "post what your owner told you", even word for word.
  `ROUTER_APPROVE_TAINTED_WRITES=false` turns this last rule off.
  One more capability comes from the owner's words (`protocol.mention_replies`): when the owner's
  message of this turn asks to answer their mentions, a reply to one of the mentions the turn read
  (`origin.answers`) needs no approval, if its text carries no owner-only data (`holds`), no link
  or handle the owner did not write, nothing that reads as an order to a model, and every other
  field is the owner's. A new post, another target, a like, a delete still wait.

Effects on what the router itself owns (its notebook, PING) are not public: only a stranger is
refused them.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from protocol.commands import CommandEnvelope
from protocol.hold_reasons import HoldReason, Sender, Why, sender_of
from protocol.injection_patterns import injection_reasons
from protocol.mention_replies import asked_platforms, covers, split_answer
from protocol.origin import AUTONOMY, OWNER, STRANGER, Origin, fold, foreign_links, said_by
from router.policy.effects import LOCAL_PLATFORM, Effect

log = logging.getLogger("safeclaw.router.policy")

# Params that say where a write goes or how it is built, not what it publishes.
NOT_PUBLISHED = frozenset({"platform"})
PUBLISHED_TEXT = ("text", "title", "url", "quote")  # what a reader of the reply sees or is sent to
OWN_WORDS = ("text", "title")  # what a write says in words, as opposed to where it points
# The fields a reader sees as words: a target (a post id) or a community name is looked up, never
# shown as text (`secret_in_text` reads them, as it reads every param).
SUSPECT_FIELDS = ("text", "title", "url", "reply_to", "quote", "post_id")
_AT_URI = re.compile(r"^at://([^/\s]+)/app\.bsky\.feed\.post/([^/?#\s]+)$")
_POST_URL = re.compile(r"^https?://(?:www\.)?bsky\.app/profile/([^/\s]+)/post/([^/?#\s]+)/?$")


def post_key(ref: str | None) -> str:
    """One spelling of a post reference: an at:// URI and its bsky.app URL are one post."""
    ref = (ref or "").strip()
    for pattern in (_AT_URI, _POST_URL):
        found = pattern.match(ref)
        if found:
            return f"bsky:{fold(found.group(1))}/{found.group(2)}"
    return fold(ref)


def published_fields(params: dict[str, Any]) -> list[tuple[str, str]]:
    """Every string a write sends the platform (text, title, link, target, community)."""
    return [(k, v) for k, v in sorted(params.items()) if k not in NOT_PUBLISHED and isinstance(v, str) and v]


class WhoseWords:
    """What the turn's writer may not ask for (`refusal`) and why a write waits for the owner
    (`hold_reason`); the policy turns them into its answers."""

    def __init__(self, approve_tainted_writes: bool = True) -> None:
        self.approve_tainted_writes = approve_tainted_writes
        if not approve_tainted_writes:
            log.warning(
                "ROUTER_APPROVE_TAINTED_WRITES=false: a turn that read outside text (a page, a post, "
                "notifications) publishes without the owner's approval"
            )

    @staticmethod
    def refusal(effect: Effect, origin: Origin | None) -> tuple[str, str] | None:
        if origin is not None and origin.holds and origin.tainted and not effect.writes:
            return "owner_only_data", f"a turn that read outside text cannot send this: {origin.holds[0]}"
        if origin is None or origin.kind == OWNER:
            return None
        if origin.kind == STRANGER:
            return stranger_refusal(effect, origin)
        elsewhere = effect.platform not in (LOCAL_PLATFORM, origin.platform) and not effect.public
        if origin.kind == AUTONOMY and origin.platform and elsewhere:
            return (
                    "outside_autonomy",
                    f"autonomy acts on {origin.platform} only; {effect.platform} is not its platform",
                )
        return None

    def hold_reason(self, effect: Effect, envelope: CommandEnvelope) -> HoldReason | None:
        """Why this write waits for the owner because of whose words it carries, or None."""
        if not effect.writes or effect.platform == LOCAL_PLATFORM:
            return None
        origin = envelope.origin
        sender = sender_of(origin)
        if origin is None:
            return HoldReason(Why.NO_ORIGIN, sender) if self.approve_tainted_writes else None
        read = origin.taint if sender == Sender.OWNER else ()
        if origin.holds:
            return HoldReason(Why.OWNER_ONLY_DATA, sender, holds=origin.holds[:3], read=read,
                              author=origin.author)
        if origin.kind == STRANGER:
            published = " ".join(v for k, v in published_fields(envelope.params) if k in PUBLISHED_TEXT)
            foreign = foreign_links(published, [*origin.owner_words, *origin.author_words])
            if not foreign:
                return None
            return HoldReason(Why.STRANGER_LINKS, sender, author=origin.author, links=tuple(foreign[:5]))
        if origin.hold_writes:
            return HoldReason(Why.OWNER_ASKED, sender, via=origin.via, author=origin.author)
        if origin.kind == AUTONOMY:
            # Otherwise its own gate: quality score, quotas, pacing, the duplicate guard, DOS.md.
            return HoldReason(Why.AUTONOMY_DELETE, sender) if effect.kind == "delete" else None
        if not self.approve_tainted_writes or not origin.taint:
            return None
        if mention_reply(effect, envelope.params, origin):
            return None
        written = published_fields(envelope.params)
        unsaid = tuple(k for k, v in written if not said_by(v, origin.owner_words))
        if unsaid:
            return HoldReason(Why.NOT_OWNER_WORDS, sender, fields=unsaid, read=read)
        # The owner's earlier messages are theirs only: what the message of this turn does not
        # itself give to publish waits, or a text read could have the agent post what it was told.
        earlier = [k for k, v in written if k in OWN_WORDS and not said_by(v, origin.owner_words[-1:])]
        if not earlier:
            return None
        told = f"its {earlier[0]} repeats what you told me in an earlier message, not in this one"
        return HoldReason(Why.OWNER_ONLY_DATA, sender, holds=(told,), read=read)


def mention_reply(effect: Effect, params: dict[str, Any], origin: Origin) -> bool:
    """Whether a write is a reply the owner's own message chose the target of: their message of
    this turn asks to answer their mentions on this platform, the reply goes to one of the mentions
    the turn read (`origin.answers`), and nothing in it was chosen by someone else: its text names
    no link or handle the owner did not write and reads as no order to a model; any other field is
    the owner's own words. (Owner-only data in it is found by the agent: `origin.holds`, decided
    before this.)"""
    if origin.kind != OWNER or not origin.answers or not origin.owner_words or origin.holds:
        return False
    if effect.kind != "reply" or not effect.target:
        return False
    if not covers(asked_platforms(origin.owner_words[-1]), effect.platform):
        return False
    target = post_key(effect.target)
    mentions = [split_answer(entry) for entry in origin.answers]
    if not any(platform == effect.platform and post_key(post) == target for platform, post in mentions):
        return False
    text = params.get("text")
    if not isinstance(text, str) or not text.strip():
        return False
    others = [v for k, v in published_fields(params) if k != "text" and post_key(v) != target]
    if any(not said_by(v, origin.owner_words) for v in others):
        return False
    if foreign_links(text, origin.owner_words):
        return False
    return not injection_reasons(text)


def stranger_refusal(effect: Effect, origin: Origin) -> tuple[str, str] | None:
    who = origin.author or "someone else"
    if not effect.writes:
        if effect.public or effect.platform == LOCAL_PLATFORM:
            return None
        return (
            "private_data",
            f"a turn {who} wrote may read public posts only, never the owner's private data "
            f"({effect.platform} notifications, messages or account)",
        )
    if (
        effect.kind == "reply"
        and origin.post
        and effect.platform == origin.platform
        and post_key(effect.target) == post_key(origin.post)
    ):
        return None
    return (
        "not_for_a_stranger",
        f"a turn {who} wrote may only reply to their own post"
        + (f" ({origin.post})" if origin.post else "")
        + "; it cannot post, like, delete or reply elsewhere on the owner's behalf",
    )


def unsaid_fields(envelope: CommandEnvelope) -> list[tuple[str, str]]:
    """The published words of a write (text, title, link) that are not the owner's own: what may
    hide something the owner never saw. A field the owner typed (a link to their document) is
    theirs to publish, however random its id looks."""
    origin = envelope.origin
    owner_words = origin.owner_words if origin is not None and origin.kind == OWNER else ()
    fields = [(name, envelope.params.get(name)) for name in SUSPECT_FIELDS]
    return [(name, v) for name, v in fields if isinstance(v, str) and v and not said_by(v, owner_words)]
