"""The dashboard's reads (GET /api/...): the state band, heartbeats, activity, stats, cost,
governance, approvals waiting, charts and autonomy. Each reads Redis or the files in one or a few
round trips, on a worker thread."""

from __future__ import annotations

import re
import time
from typing import Any

import redis
from starlette.requests import Request
from starlette.responses import Response

from dashboard import activity, approvals_view, audit_files, charts, readers, state, workspace_reads
from dashboard.audit_mirror import AuditMirror
from dashboard.endpoints import ApiError, Endpoints

STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")
REHEARSAL_NOTE = ("Dry run: these are the rehearsal's own counts (what the real quotas would look like); "
                  "the real quotas are untouched.")


class PanelReads(Endpoints):
    router_keys: state.RouterKeys
    mirror: AuditMirror
    cost_history: workspace_reads.CostHistory

    def _status(self) -> dict[str, Any]:
        now = time.time()
        try:
            raw = state.read_raw(self.conn, self.keys, self.router_keys.get(self.conn))
        except redis.RedisError as exc:
            return state.status(None, now, type(exc).__name__)
        return state.status(raw, now)

    def _beats(self) -> dict[str, Any]:
        return readers.heartbeats(self.conn, self.keys, self.router_keys.get(self.conn), time.time())

    def _stats(self) -> dict[str, Any]:
        return readers.stats(self.conn, self.keys, self.router_keys.get(self.conn), time.time())

    def _activity(self, query: dict[str, str], before: str | None, limit: int) -> dict[str, Any]:
        return audit_files.activity_page(self.mirror, self.settings.audit_dir, query, before, limit)

    def _charts(self) -> dict[str, Any]:
        now = time.time()
        self.mirror.sync()
        cost = readers.cost(self.conn, self.keys)
        budget = cost.get("daily_budget_usd") if cost.get("available") and not cost.get("free") else None
        stats = self._stats()
        days = self.cost_history.per_day()
        drawn = charts.all_charts(self.mirror.hourly_counts(), days, budget, stats["platforms"], now)
        return {"charts": drawn, "quota_note": REHEARSAL_NOTE if stats["dry_run"] else ""}

    def _autonomy(self) -> dict[str, Any]:
        return workspace_reads.autonomy_panel(
            self.settings.workspace_dir, self.settings.agent_config, time.time()
        )

    async def get_charts(self, request: Request) -> Response:
        return self.json(await self.run(self._charts))

    async def get_autonomy(self, request: Request) -> Response:
        return self.json(await self.run(self._autonomy))

    async def get_status(self, request: Request) -> Response:
        return self.json(await self.run(self._status))

    async def get_heartbeat(self, request: Request) -> Response:
        return self.json(await self.run(self._beats))

    async def get_activity(self, request: Request) -> Response:
        params = request.query_params
        raw = params.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 1000:
            raise ApiError(400, "limit must be a whole number from 1 to 1000")
        before = params.get("before") or None
        if before is not None and not (STREAM_ID.fullmatch(before) or audit_files.parse_cursor(before)):
            raise ApiError(400, "before must be an activity id from an earlier page")
        query = {name: params.get(name, "")[:100] for name in (*activity.FILTERS, "q")}
        return self.json(await self.run(self._activity, query, before, int(raw)))

    async def get_stats(self, request: Request) -> Response:
        return self.json(await self.run(self._stats))

    async def get_cost(self, request: Request) -> Response:
        return self.json(await self.run(readers.cost, self.conn, self.keys))

    async def get_governance(self, request: Request) -> Response:
        found = await self.run(readers.governance, self.conn, self.keys, self.settings.governance_dir)
        return self.json(found)

    async def get_approvals(self, request: Request) -> Response:
        raw = request.query_params.get("offset", "0")
        if not raw.isdigit() or int(raw) > 1_000_000:
            raise ApiError(400, "offset must be a whole number")
        return self.json(await self.run(approvals_view.pending_page, self.conn, self.keys, int(raw)))
