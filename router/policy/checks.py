"""Policy: what the router refuses even when the command is valid. It decides on the command's
`Effect` (platform + kind + text + target) and on whose words it carries, never on its action name.

A `Policy` is its checks, built once here in this order; the first that returns a `Decision`
refuses the command. Each check is `check(effect, envelope, conn, now) -> Decision | None`:

1. the kill switch, the origin rules (`router.policy.whose_words`) and `secret_in_text`: a command
   refused anyway is refused at once, never held nor stored for the owner with a secret in it;
2. the approval: a command that waits for the owner is held by the router's `hold` (the worker's
   approval flow stores it and tells the owner); a policy with no `hold` (the one-shot tool) can
   hold nothing, so it refuses the command unrun;
3. the rate limits, then the hard bounds (`router.bounds`: quotas, pacing, the duplicate guard, the
   circuit breaker), last because they take a share (a quota unit, a pacing slot, the text) that a
   later refusal would have to give back, and so a held command is counted once, when it runs.

A caller with its own round trips can save the policy two (`Ahead`, in `router.policy.decisions`):
the kill switch read with its records (`queue_kill_switch`, still read fresh for each command), and
its claim of the command id (`Gate`), taken with the rate limits and the bounds as one atomic step
(`router.policy.counted`): a copy that loses the claim takes no share. When no check between could
hold the command (no approval, no rate limit on its scope), the bounds and the claim can ride the
caller's reads (`stage_bounds`): the checks still decide in the order above, and the caller gives
back what the bounds took when an earlier check refuses. Rate limits: `router.policy.rate_limits`.

After a command ran (or was refused), `record` gives the outcome to the bounds. Settings that name
actions or effects are resolved once, at start, against the registry: anything unknown is a
ConfigError naming it. The worker and the one-shot tool build the same `Policy`; only `hold` differs.

A mind that obeys every injection can still do no more than this allows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import redis

from protocol.commands import CommandEnvelope
from protocol.hold_reasons import HoldReason, Why, sender_of, sentence
from protocol.keys import Keys
from protocol.replies import Reply, Status
from protocol.suspicion import fields_suspicion
from router.bounds import Counters, Denial, Staged
from router.bounds.embedded import EmbeddedStore
from router.bounds.guard import HardBounds, Held
from router.config.settings import RouterSettings
from router.policy import kill_switch as live_kill_switch
from router.policy.counted import CountedChecks, bounded
from router.policy.decisions import Ahead, Check, Decision, Hold, RateRule
from router.policy.effects import Effect, EffectCatalogue, HasEffects
from router.policy.rate_limits import rate_limit_decision
from router.policy.whose_words import WhoseWords, unsaid_fields
from router.redaction import Redactor

log = logging.getLogger("safeclaw.router.policy")


DRY_RUN_COUNTERS = "dry-run:"  # under the router prefix: the dry run's own quotas, pacing, duplicates


class Policy:
    def __init__(
        self,
        settings: RouterSettings,
        skills: Mapping[str, HasEffects],
        redactor: Redactor,
        hold: Hold | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.keys: Keys = settings.keys
        self.redactor = redactor
        self.hold = hold
        self.clock = clock
        self.catalogue = EffectCatalogue(skills)
        resolve = self.catalogue.resolve
        self.approval_scopes = self.catalogue.resolve_all(
            "ROUTER_REQUIRE_APPROVAL", settings.require_approval
        )
        self.rate_rules = [
            RateRule(name, resolve("ROUTER_RATE_LIMITS", name), rule.limit, rule.window_seconds)
            for name, rule in settings.rate_limits.items()
        ]
        self.whose_words = WhoseWords(settings.approve_tainted_writes)  # warns when it is off
        # A dry run counts in bounds of its own: a rehearsal behaves as the real run would (its
        # quotas, pacing, duplicates) but never spends or blocks the real ones.
        self.counter_prefix = self.keys.router_prefix + (DRY_RUN_COUNTERS if settings.dry_run else "")
        self.bounds = HardBounds(settings.bounds, self.counter_prefix, self.keys.owner_notices)
        self.counted = CountedChecks(self.bounds, self.rate_rules, self.counter_prefix, settings.dry_run)
        # Where counters go when there is no Redis connection (the one-shot tool): see router.bounds.
        self.embedded: EmbeddedStore | None = None
        self.checks: list[Check] = [
            self.kill_switch,
            self.origin_rules,
            self.secret_in_text,
            self.approval,
            self.rate_limit,
            self.hard_bounds,
        ]

    def counters(self, conn: redis.Redis | None) -> Counters | None:
        """Where the quotas, pacing, duplicate guard, circuit breaker and rate limits count."""
        return conn if conn is not None else self.embedded

    def decide(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, ahead: Ahead | None = None
    ) -> Decision | None:
        """None when the command may run; otherwise why not. `ahead`: see the module's doc; its
        claim (`gate`) is taken here, with the rate limits and the bounds, once the checks before
        them passed (`router.policy.counted`)."""
        now = self.clock()
        for check in self.checks:
            if ahead is not None and check == self.kill_switch and ahead.switch_read:
                decision = self.switch_decision(effect, envelope, ahead.kill_switch, conn)
            elif ahead is not None and check == self.approval and (ahead.bounds_taken or ahead.approved):
                decision = None  # approved, or `stage_bounds` took the bounds after finding no hold reason
            elif check == self.rate_limit and ahead is not None and ahead.gate is not None and conn:
                decision = None  # counted with the bounds, in the claim's step (`hard_bounds`)
            elif ahead is not None and check == self.hard_bounds:
                decision = self.hard_bounds(effect, envelope, conn, now, ahead)
            else:
                decision = check(effect, envelope, conn, now)
            if decision is not None:
                return decision
        return None

    def stage_bounds(
        self, pipe: Any, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None
    ) -> Staged[Held] | None:
        """The bounds' commands on the caller's pipeline, ahead of the checks before them, when
        nothing between could need them untaken: no hold (`hold_reason`), no rate limit on the
        scope. None when the checks must take them in their own order (`decide` does). What they
        took is given back by the caller if an earlier check refuses (`bounds.give_back`)."""
        if conn is None or not bounded(effect):
            return None
        if self.hold_reason(effect, envelope) is not None:
            return None
        if any(effect.scope in rule.scopes for rule in self.rate_rules):
            return None
        return self.bounds.stage_check(pipe, effect, self.clock())

    def queue_kill_switch(self, pipe: Any, effect: Effect) -> bool:
        """Queue the read of the live switch on the caller's pipeline when this effect needs it;
        its answer goes in `Ahead.kill_switch`."""
        if not effect.writes or self.settings.kill_switch:
            return False
        pipe.get(self.keys.kill_switch)
        return True

    def record(
        self, effect: Effect, envelope: CommandEnvelope, reply: Reply, conn: redis.Redis | None
    ) -> None:
        """Give the bounds how the command ended; a failure there is logged, never fatal."""
        try:
            self.record_bounds(effect, envelope, reply, conn, self.clock())
        except redis.ConnectionError:
            raise
        except Exception:
            log.exception("the bounds could not record command %s", envelope.id)

    # -- the hard bounds (router.bounds) ----------------------------------------------------
    def hard_bounds(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, now: float,
        ahead: Ahead | None = None,
    ) -> Decision | None:
        if ahead is not None and ahead.gate is not None and conn is not None:
            return self.counted.with_claim(effect, envelope, conn, now, ahead.gate)
        if not bounded(effect):
            return None  # the router's own notebook; every platform is bounded, listed or not
        counters = self.counters(conn)
        if counters is None:
            return Decision(
                Status.DENIED,
                "bounds_unavailable",
                f"{envelope.action} ({effect.scope}) refused: the quotas, pacing, duplicate guard and "
                "circuit breaker have nowhere to be counted (no Redis, no embedded store)",
            )
        if ahead is not None and ahead.bounds_taken:
            taken = ahead.bounds
            if not isinstance(taken, Denial):
                if taken is not None:
                    self.bounds.keep(envelope.id, taken)
                return None
            denial: Denial | None = taken
        else:
            denial = self.bounds.check(counters, effect, envelope.id, now)
        return self.counted.refusal(envelope, denial)

    def record_bounds(
        self, effect: Effect, envelope: CommandEnvelope, reply: Reply, conn: redis.Redis | None, now: float
    ) -> None:
        counters = self.counters(conn)
        if counters is not None and bounded(effect):
            self.bounds.record(
                counters, effect, envelope.id, str(reply.status), reply.error, now, envelope.conversation
            )

    # -- the built-in checks ---------------------------------------------------------------
    def kill_switch(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, now: float
    ) -> Decision | None:
        """ROUTER_KILL_SWITCH (a floor), then the owner's live switch in Redis, read per command."""
        if not effect.writes:
            return None
        raw = None if self.settings.kill_switch or conn is None else conn.get(self.keys.kill_switch)
        return self.switch_decision(effect, envelope, raw, conn)

    def switch_decision(
        self, effect: Effect, envelope: CommandEnvelope, raw: bytes | str | None, conn: redis.Redis | None
    ) -> Decision | None:
        """The kill switch's refusal, given the live key's raw value as read for this command."""
        if not effect.writes:
            return None
        if self.settings.kill_switch:
            why = "ROUTER_KILL_SWITCH in the router's environment"
        else:
            state = live_kill_switch.parse(raw) if conn is not None else None
            if state is None or not state.on:
                return None
            why = f"turned on by {state.by or 'the owner'}"
        return Decision(
            Status.DENIED,
            "kill_switch",
            f"{envelope.action} ({effect.scope}) denied: the kill switch is on ({why})",
        )

    def origin_rules(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, now: float
    ) -> Decision | None:
        """What the turn's writer may not ask for (`router.whose_words`): a stranger's turn reads
        public posts and replies to their own post, autonomy stays on its platform."""
        why = self.whose_words.refusal(effect, envelope.origin)
        if why is None:
            return None
        error, message = why
        return Decision(Status.DENIED, error, f"{envelope.action} ({effect.scope}) refused: {message}")

    def secret_in_text(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, now: float
    ) -> Decision | None:
        """No text that holds a credential or a secret-shaped string is published: the effect's
        text, and every other param of a write (a title, a link, a target), whatever it becomes."""
        if not effect.writes:
            return None
        params = envelope.params
        if (effect.text and self.redactor.finds(effect.text)) or self.redactor.value(params) != params:
            why = "a credential or a secret-shaped string (an API key, a token, a password)"
            message = f"{envelope.action} refused: its text holds {why}; it was not published"
            return Decision(Status.DENIED, "secret_in_text", message)
        return None

    def hold_reason(self, effect: Effect, envelope: CommandEnvelope) -> HoldReason | None:
        """Why this command waits for the owner, or None: its scope needs approval
        (ROUTER_REQUIRE_APPROVAL), its words are not the owner's (`whose_words`), or a text it
        publishes carries a decodable blob or a long random-looking run (a secret in an encoding no
        redactor lists) in any published field the owner did not write."""
        if effect.scope in self.approval_scopes:
            return HoldReason(Why.SCOPE, sender_of(envelope.origin))
        if not effect.writes:
            return None
        whose = self.whose_words.hold_reason(effect, envelope)
        if whose is not None:
            return whose
        suspect = fields_suspicion(unsaid_fields(envelope))
        if suspect is None:
            return None
        name, why = suspect
        return HoldReason(Why.MAY_HIDE_SECRET, sender_of(envelope.origin), fields=(name,), detail=why)

    def approval(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, now: float
    ) -> Decision | None:
        reason = self.hold_reason(effect, envelope)
        if reason is None:
            return None
        if self.hold is not None:
            return self.hold(effect, envelope, reason, now)
        return Decision(
            Status.PENDING_APPROVAL,
            "approval_required",
            f"{envelope.action} ({effect.scope}) needs approval by the router's owner: {sentence(reason)} "
            "It was not run.",
        )

    def rate_limit(
        self, effect: Effect, envelope: CommandEnvelope, conn: redis.Redis | None, now: float
    ) -> Decision | None:
        counters = self.counters(conn)
        return rate_limit_decision(self.rate_rules, counters, self.counter_prefix, effect, envelope, now)

