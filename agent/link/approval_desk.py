"""The agent's side of approvals: it delivers the router's owner notices and relays the owner's
decisions typed in a chat. It can never decide by itself.

The router pushes notices on `Keys.owner_notices`; the desk moves each into its in-flight list,
hands it to `deliver`, then drops it (a notice in flight when the agent died is delivered at the
next start). An `approval_requested` notice carries the one-time code the router will ask for:
the desk keeps it under the agent's own key (`safeclaw:agent:approvals`), never in a prompt,
history or workspace file. `/approve ID` (or a Telegram button) sends `APPROVAL_DECISION` with
that code; the router checks it. Notices reach the owner through channels only, never the model.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import redis

from agent.channels.display import escaped
from agent.commands.describe import OUTBOX, the_thing
from agent.workspace.memory import one_line
from protocol.keys import Keys

log = logging.getLogger("safeclaw.agent.approvals")
APPROVAL_DECISION = "APPROVAL_DECISION"
MAX_TAKEN = 50
HELD_DAYS = 8  # how long a held command's entry is kept here at most (the router's own ttl is shorter)


@dataclass(frozen=True)
class Notice:
    raw: str  # as it sits in the in-flight list (to drop it once delivered)
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data.get("type", ""))

    @property
    def conversation(self) -> str:
        return str(self.data.get("conversation") or "")


def held_write_lines(data: dict[str, Any]) -> list[str]:
    """Every field the platform would receive, why it waits and what the turn had read: what the
    owner approves is exactly what is published."""
    payload = data.get("payload")
    fields = [
        f"{one_line(str(item.get('label') or item.get('field')))}: {item.get('value', '')}"
        for item in (payload if isinstance(payload, list) else [])
        if isinstance(item, dict) and item.get("field") != "platform"
    ]
    lines = fields or [str(data.get("text") or "")]
    if data.get("reason"):
        lines.append(f"Why it waits: {data['reason']}")
    read = data.get("read")
    if isinstance(read, list) and read:
        lines.append("The turn had read: " + "; ".join(one_line(str(r)) for r in read[:6]))
    return lines


def notice_text(data: dict[str, Any]) -> str:
    """What the owner reads, in plain words: never the code, never an action's internal name."""
    if data.get("type") in ("circuit_open", "circuit_closed"):  # router.bounds.circuit
        return f"Circuit breaker: {data.get('message') or data.get('platform')}"
    what = the_thing(str(data.get("action") or "?"), data.get("platform"), bool(data.get("reply_to")),
                     data.get("why"))
    # Every field exactly as it would go out, one a line.
    text = "\n".join(escaped(line) for line in held_write_lines(data))
    ident = data.get("approval_id")
    if data.get("type") == "approval_requested":
        if not data.get("owner_code"):  # the router takes no decision from a chat
            return (
                f"Approval needed: {what}\n{text}\nApprove or deny it on the dashboard, or with "
                f"./safeclaw approve {ident} / deny {ident}."
            )
        return (
            f"Approval needed: {what}\n{text}\nApprove with /approve {ident} or deny with /deny {ident} "
            "(or on the dashboard)."
        )
    state, message = data.get("state"), str(data.get("message") or "").strip()
    if state == "approved" and data.get("status") == "ok":
        if data.get("dry_run"):
            return f"Approved: {what} was written to {OUTBOX} (dry run, not sent)."
        return f"Approved: {what} is out" + (f": {data['url']}" if data.get("url") else ".")
    if state == "approved":
        return f"Approved, but {what} did not go through ({data.get('status')}: {message or 'no details'})."
    return f"{str(state).capitalize()}: {what} was not run" + (f" ({message})." if message else ".")


class ApprovalDesk:
    def __init__(self, conn: redis.Redis, keys: Keys, router: Any) -> None:
        self.conn = conn
        self.keys = keys
        self.router = router  # the agent's RouterPort: call(action, params, conversation)
        self.codes_key = f"{keys.agent_prefix}approvals"

    # -- notices --------------------------------------------------------------------------------
    def in_flight(self) -> list[Notice]:
        """Notices taken earlier and not delivered (after a crash), oldest first."""
        return [
            n
            for raw in reversed(self.conn.lrange(self.keys.owner_notices_inflight, 0, -1))
            if (n := self._notice(str(raw))) is not None
        ]

    def take(self) -> list[Notice]:
        """Move waiting notices into the in-flight list, oldest first; keep each request's code."""
        taken = []
        for _ in range(MAX_TAKEN):
            raw = self.conn.lmove(self.keys.owner_notices, self.keys.owner_notices_inflight, "RIGHT", "LEFT")
            if raw is None:
                break
            notice = self._notice(str(raw))
            if notice is not None:
                taken.append(notice)
        return taken

    def _notice(self, raw: str) -> Notice | None:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            log.warning("dropping an unreadable owner notice")
            self.conn.lrem(self.keys.owner_notices_inflight, 1, raw)
            return None
        self._keep(data)
        return Notice(raw, data)

    def delivered(self, notice: Notice) -> None:
        self.conn.lrem(self.keys.owner_notices_inflight, 1, notice.raw)

    # -- codes, kept out of every prompt --------------------------------------------------------
    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            value = json.loads(self.conn.get(self.codes_key) or "{}")
        except json.JSONDecodeError:
            value = {}
        now = time.time()
        return {k: v for k, v in value.items() if isinstance(v, dict) and float(v.get("expires_at", 0)) > now}

    def _save(self, pending: dict[str, dict[str, Any]]) -> None:
        self.conn.set(self.codes_key, json.dumps(pending), ex=8 * 24 * 3600)

    def _keep(self, data: dict[str, Any]) -> None:
        ident = str(data.get("approval_id", ""))
        if not ident:
            return
        pending = self._load()
        if data.get("type") == "approval_requested":
            pending[ident] = {**pending.get(ident, {}),
                "code": str(data.get("owner_code") or ""),
                "expires_at": data.get("expires_at", 0),
                "summary": notice_text({**data, "type": "summary"}).split("\n")[0],
                "action": data.get("action"),
                "platform": data.get("platform"),
                "why": data.get("why"),
                "text": str(data.get("text") or "")[:200],
                "fields": [line[:500] for line in held_write_lines(data)],  # every field, why, what was read
            }
        elif data.get("type") == "approval_settled":
            pending.pop(ident, None)
        else:
            return
        self._save(pending)

    def note_held(self, observation: dict[str, Any], action: str, params: dict[str, Any]) -> None:
        """A command the router just held (its reply said so): known here at once, before its
        notice (and the code a decision needs) arrives a moment later."""
        ident = str(observation.get("approval_id") or "")
        if observation.get("status") != "pending_approval" or not ident:
            return
        try:
            pending = self._load()
            if ident not in pending:
                pending[ident] = {"code": "", "expires_at": time.time() + HELD_DAYS * 24 * 3600,
                                  "action": action, "platform": params.get("platform"),
                                  "text": str(params.get("text") or "")[:200]}
                self._save(pending)
        except redis.RedisError as exc:  # the notice brings it all the same
            log.warning("could not note held approval %s: %s", ident, type(exc).__name__)

    def waiting(self) -> list[str]:
        """The ids the router holds for the owner's decision: its own list (the one `./safeclaw
        approvals` and the dashboard read) is the only word on what waits."""
        return [str(ident) for ident in self.conn.zrange(self.keys.approvals_pending, 0, -1)]

    def takes_chat_decisions(self) -> bool:
        """True once the router handed a one-time code for a waiting command: it takes a decision
        typed in a chat (ROUTER_CHAT_APPROVALS). Without one, /approve could only be refused."""
        waiting = set(self.waiting())
        return any(entry.get("code") for ident, entry in self._load().items() if ident in waiting)

    def pending_lines(self) -> list[str]:
        waiting = self.waiting()
        if not waiting:
            return ["No approval is waiting for you."]
        known = self._load()
        lines = []
        for ident in waiting:
            entry = known.get(ident)
            if entry is None:
                lines.append(f"{ident}: waiting for your decision (its details: ./safeclaw approvals or "
                             "the dashboard)")
                continue
            what = the_thing(str(entry.get("action") or "?"), entry.get("platform"), why=entry.get("why"))
            fields = entry.get("fields")
            if isinstance(fields, list) and fields:
                lines.append(f"{ident}: {what}")
                lines += [f"    {escaped(str(line))}" for line in fields]
                continue
            text = escaped(str(entry.get("text") or ""))
            lines.append(f"{ident}: {what}" + (f": {text}" if text else ""))
        return lines

    def decide(self, approval_id: str, decision: str, conversation: str) -> str:
        """Relay the owner's decision; returns the line to answer them with."""
        entry = self._load().get(approval_id.strip())
        if entry is None or approval_id.strip() not in self.waiting():
            return f"No approval {approval_id!r} is waiting here (see /approvals)."
        if not entry.get("code") and entry.get("summary") is None:  # its notice is on its way
            return (f"{approval_id.strip()} is waiting, and its notice has not reached me yet: try again "
                    f"in a moment, or decide with ./safeclaw {decision} {approval_id.strip()}.")
        if not entry.get("code"):
            return (
                f"The router takes no decisions from a chat: decide {approval_id.strip()} on the dashboard "
                f"or with ./safeclaw {decision} {approval_id.strip()}."
            )
        params = {"approval_id": approval_id.strip(), "decision": decision, "code": entry["code"]}
        result = self.router.call(APPROVAL_DECISION, params, conversation)
        if result.get("status") == "ok":
            what = the_thing(str(entry.get("action") or "?"), entry.get("platform"), why=entry.get("why"))
            if decision == "approve":
                return f"Done: {what} is approved; the router runs it once, and you will be told how it went."
            return f"Done: {what} is denied; it will not run."
        return f"The router refused it: {result.get('message') or result.get('error')}"
