"""Every Redis key name of SafeClaw, under one prefix: the queue, replies, the router's own keys, the
agent's summaries and the owner's control plane. The ACLs are generated from these too.

The prefix is a Redis Cluster hash tag (`{safeclaw}`): every key hashes to one slot, so the claim's
script, BLMOVE from a queue into a processing list and every round trip of several keys stay legal
on a cluster (no CROSSSLOT), and moving to one is a change of REDIS_URL only (docs/deploy.md). A
COMMAND_QUEUE or RESPONSE_PREFIX given in the settings must start with the same tag on a cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

HASH_TAG = "{safeclaw}"
AGENT_LOGIN = "agent"
MCP_LOGIN = "mcp"
# The Redis logins that may queue commands, each on its own queue with its own replies: the router
# takes whose words a command carries from the queue it came from, never from the envelope alone.
SENDING_LOGINS = (AGENT_LOGIN, MCP_LOGIN)


@dataclass(frozen=True)
class Keys:
    """Every Redis key name of SafeClaw, under one prefix. ACLs are generated from these too."""

    prefix: str = f"{HASH_TAG}:"
    command_queue: str = f"{HASH_TAG}:command_queue"
    response_prefix: str = f"{HASH_TAG}:response:"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Keys:
        """The names both processes agree on, with COMMAND_QUEUE / RESPONSE_PREFIX overrides."""
        return cls(
            command_queue=env.get("COMMAND_QUEUE") or cls.command_queue,
            response_prefix=env.get("RESPONSE_PREFIX") or cls.response_prefix,
        )

    def untagged(self) -> list[str]:
        """The configured names that do not start with the hash tag (they break on a cluster)."""
        return [name for name in (self.prefix, self.command_queue, self.response_prefix)
                if not name.startswith(HASH_TAG)]

    def response(self, command_id: str) -> str:
        """The agent's reply key for a command (see `response_of` for another login's)."""
        return f"{self.response_prefix}{command_id}"

    # -- one queue and one set of replies per sending login ---------------------------------
    # The agent's keep their first names (COMMAND_QUEUE, RESPONSE_PREFIX).
    def command_queue_of(self, login: str) -> str:
        """The queue only `login` may push to (the router's ACL may take from it)."""
        if login == AGENT_LOGIN:
            return self.command_queue
        return f"{self.prefix}login:{login}:command_queue"

    def response_prefix_of(self, login: str) -> str:
        """The prefix of the replies to `login`'s commands: readable by that login only."""
        if login == AGENT_LOGIN:
            return self.response_prefix
        return f"{self.prefix}login:{login}:response:"

    def response_of(self, login: str, command_id: str) -> str:
        return f"{self.response_prefix_of(login)}{command_id}"

    def processing_of(self, login: str, router_id: str) -> str:
        """A router's processing list of `login`'s queue (router_id `*`: every router's)."""
        if login == AGENT_LOGIN:
            return self.processing(router_id)
        return f"{self.router_prefix}{login}:processing:{router_id}"

    @property
    def router_prefix(self) -> str:
        """Keys only the router may touch (processing lists, idempotency, dead letters, heartbeats)."""
        return f"{self.prefix}router:"

    def processing(self, router_id: str) -> str:
        """A router's processing list of the agent's queue (`processing_of` for any login's)."""
        return f"{self.router_prefix}processing:{router_id}"

    def idempotency(self, command_id: str) -> str:
        return f"{self.router_prefix}idem:{command_id}"

    def intent(self, intent: str) -> str:
        return f"{self.router_prefix}intent:{intent}"

    def fingerprint(self, command_id: str) -> str:
        """The action and params a side-effecting command id was first seen with (a hash)."""
        return f"{self.router_prefix}fingerprint:{command_id}"

    def attempts(self, command_id: str) -> str:
        return f"{self.router_prefix}attempts:{command_id}"

    @property
    def dead_letter(self) -> str:
        return f"{self.router_prefix}dead_letter"

    def router_heartbeat(self, router_id: str) -> str:
        return f"{self.router_prefix}heartbeat:{router_id}"

    @property
    def agent_prefix(self) -> str:
        return f"{self.prefix}agent:"

    @property
    def agent_heartbeat(self) -> str:
        return f"{self.agent_prefix}heartbeat"

    @property
    def agent_cost(self) -> str:
        """The agent's LLM cost summary (JSON: today_usd, total_usd, daily_budget_usd,
        total_budget_usd, calls_today, tokens_today); the dashboard reads it."""
        return f"{self.agent_prefix}cost"

    @property
    def agent_autonomy(self) -> str:
        """Autonomy's last heartbeat and whether it is stuck (JSON); the dashboard reads it."""
        return f"{self.agent_prefix}autonomy"

    # -- the control plane (dashboard, ./safeclaw approvals/stop-posting) ------------------
    @property
    def control_prefix(self) -> str:
        """Keys the owner's control plane writes: the live kill switch and rule injections."""
        return f"{self.prefix}control:"

    @property
    def kill_switch(self) -> str:
        """JSON {"on": bool, "by": str, "ts": float}; every router reads it before a side effect."""
        return f"{self.control_prefix}kill_switch"

    @property
    def rule_injections(self) -> str:
        """A list of JSON {rule, why, author, ts} the owner injected, newest first; the agent applies them."""
        return f"{self.control_prefix}rule_injections"

    @property
    def audit_stream(self) -> str:
        """A Redis stream mirroring every router's audit lines (field `line`), capped.

        The routers' files are the record; this copy feeds the dashboard."""
        return f"{self.prefix}audit"

    @property
    def approval_prefix(self) -> str:
        return f"{self.prefix}approval:"

    def approval(self, approval_id: str) -> str:
        """The stored command waiting for the owner (JSON; written by the router only)."""
        return f"{self.approval_prefix}record:{approval_id}"

    @property
    def approvals_pending(self) -> str:
        """Sorted set of pending approval ids, scored by their expiry (unix seconds)."""
        return f"{self.approval_prefix}pending"

    def approval_decision(self, approval_id: str) -> str:
        """The owner's decision (SET NX: the first decision wins), JSON {decision, by, ts}."""
        return f"{self.approval_prefix}decision:{approval_id}"

    @property
    def approvals_decided(self) -> str:
        """A list of approval ids with a new decision; a router moves each into its own list and acts."""
        return f"{self.approval_prefix}decided"

    def approvals_taken(self, router_id: str) -> str:
        """The decided ids one router is acting on (recovered after a crash, like `processing`)."""
        return f"{self.router_prefix}approving:{router_id}"

    @property
    def owner_notices(self) -> str:
        """A list of JSON notices for the owner (approval asked / approved / denied / expired) that
        the agent delivers to the conversation that asked, and to Telegram when configured."""
        return f"{self.prefix}notices"

    @property
    def owner_notices_inflight(self) -> str:
        """Notices the agent took and has not delivered yet (re-delivered after a crash)."""
        return f"{self.agent_prefix}notices_inflight"
