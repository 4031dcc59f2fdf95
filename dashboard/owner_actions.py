"""What the owner does from the dashboard: the kill switch, a rule, a proposal accepted, an approval
decided. Each takes a JSON object posted with `Content-Type: application/json`."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dashboard import readers
from dashboard.endpoints import ApiError, Endpoints
from protocol import approvals, kill_switch
from protocol.rule_injections import MAX_PENDING

log = logging.getLogger("safeclaw.dashboard")
MAX_BODY_BYTES = 16_384
MAX_RULE_CHARS = 2000


class OwnerActions(Endpoints):
    # -- admin --------------------------------------------------------------------------------
    async def body(self, request: Request) -> dict[str, Any]:
        """The JSON object posted. Only `Content-Type: application/json`: what a form or a
        text/plain fetch from another site can send without a preflight never acts."""
        media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type != "application/json":
            raise ApiError(415, "send the body as JSON, with Content-Type: application/json")
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"the body is over {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ApiError(400, "the body must be a JSON object") from None
        if not isinstance(data, dict):
            raise ApiError(400, "the body must be a JSON object")
        return data

    async def post_kill(self, request: Request) -> Response:
        data = await self.body(request)
        if not isinstance(data.get("on"), bool):
            raise ApiError(400, 'send {"on": true} to stop every side effect, {"on": false} to resume')
        value = await self.run(kill_switch.flip, self.conn, self.keys, data["on"], "dashboard")
        log.info("kill switch turned %s from the dashboard", "on" if data["on"] else "off")
        return self.json({"kill_switch": value})

    async def post_inject_rule(self, request: Request) -> Response:
        data = await self.body(request)
        rule, why = data.get("rule"), data.get("why", "")
        if not isinstance(rule, str) or not rule.strip() or not isinstance(why, str):
            raise ApiError(400, 'send {"rule": "…", "why": "…"} with a non-empty rule')
        if len(rule) > MAX_RULE_CHARS or len(why) > MAX_RULE_CHARS:
            raise ApiError(400, f"rule and why are at most {MAX_RULE_CHARS} characters each")
        entry = {"rule": rule.strip(), "why": why.strip(), "author": "owner (dashboard)", "ts": time.time()}
        await self.run(self.queue_for_agent, json.dumps(entry, ensure_ascii=False))
        log.info("rule injected from the dashboard (%d characters)", len(rule.strip()))
        return self.json({"injected": entry})

    def queue_for_agent(self, raw: str) -> None:
        """Push onto the rule-injection list, which the agent empties as it applies; past
        MAX_PENDING waiting entries the push is taken back and refused (the agent is not running)."""
        length = int(self.conn.lpush(self.keys.rule_injections, raw))
        if length > MAX_PENDING:
            self.conn.lrem(self.keys.rule_injections, 1, raw)
            raise ApiError(
                503,
                f"{MAX_PENDING} rules already wait for the agent to apply them; start the agent "
                "(autonomy applies them within seconds), then try again",
            )

    async def post_accept(self, request: Request) -> Response:
        """The owner accepts proposal N: an `{accept: N}` entry on the rule-injection list, which
        the agent applies with the same `Governance.accept` as `./safeclaw rules accept N`."""
        await self.body(request)
        raw = str(request.path_params["number"])
        if not raw.isdigit() or not 1 <= int(raw) <= 1_000_000:
            raise ApiError(400, "the proposal number must be a whole number from 1")
        number = int(raw)
        known = await self.run(readers.proposals, self.settings.governance_dir) or []
        found = next((p for p in known if p["number"] == number), None)
        if found is None:
            open_ones = ", ".join(str(p["number"]) for p in known if not p["accepted_at"]) or "none"
            message = f"there is no proposal #{number}; open proposals: {open_ones}"
            return self.json({"error": "not_found", "message": message}, 404)
        if found["accepted_at"]:
            return self.json({"error": "conflict", "message": f"proposal #{number} is already accepted"}, 409)
        entry = {"accept": number, "author": "owner (dashboard)", "ts": time.time()}
        await self.run(self.queue_for_agent, json.dumps(entry))
        log.info("proposal #%d accepted from the dashboard", number)
        message = f"proposal #{number} accepted; the agent writes it into DOS.md within seconds"
        return self.json({"accept_requested": entry, "message": message}, 202)

    async def post_decision(self, request: Request) -> Response:
        await self.body(request)
        approval_id = str(request.path_params["approval_id"])
        decision = "approve" if request.url.path.endswith("/approve") else "deny"
        try:
            line = await self.run(approvals.decide, self.conn, self.keys, approval_id, decision, "dashboard")
        except approvals.ApprovalError as exc:
            return self.json({"error": "conflict", "message": str(exc)}, 409)
        log.info("approval %s: %s from the dashboard", approval_id, decision)
        return self.json({"id": approval_id, "decision": decision, "message": line})
