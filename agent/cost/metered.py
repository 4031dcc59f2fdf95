"""MeteredLLM: the one wrapper every provider goes through. The budget is checked before each
call (past it, nothing is sent) and each call's tokens, as the provider reported them, are priced
and written to the ledger."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from agent.cost.budget import BudgetGuard
from agent.cost.prices import price_of
from agent.errors import BudgetExhausted
from agent.llm.base import BaseLLM
from agent.llm.usage import estimated_usage

# Who is calling, for the ledger's `label`: the conversation, or "autonomy:score".
_label: ContextVar[str] = ContextVar("safeclaw_cost_label", default="")


@contextlib.contextmanager
def cost_label(label: str) -> Iterator[None]:
    token = _label.set(label)
    try:
        yield
    finally:
        _label.reset(token)


class MeteredLLM(BaseLLM):
    def __init__(self, inner: BaseLLM, guard: BudgetGuard) -> None:
        super().__init__(inner.model, inner.timeout)
        self.inner = inner
        self.guard = guard
        self.name = inner.name
        self.prompt_template = inner.prompt_template
        self.observes_results = inner.observes_results
        self.calls = 0  # calls actually sent to the provider by this wrapper
        self.tokens = 0  # their tokens, in and out
        self.usd = 0.0  # and what they cost
        # The last call's outcome, for the agent's heartbeat (the dashboard's LLM light).
        self.health: dict[str, Any] | None = None
        self.smallest_prompt: int | None = None  # input tokens of the smallest call sent (autonomy's pause)
        self.refused_prompt: int | None = None  # input tokens of the last call the budget refused

    def chat(self, prompt: str) -> str:
        return self._metered(prompt, lambda: self.inner.chat(prompt))

    def chat_structured(self, prompt: str, schema: dict[str, Any]) -> str:
        """A structured (JSON schema) call costs like any other: the same check and ledger."""
        return self._metered(prompt, lambda: self.inner.chat_structured(prompt, schema))

    def _metered(self, prompt: str, send: Callable[[], str]) -> str:
        price = price_of(self.inner.name, self.inner.model, self.guard.settings.prices)
        projected = self.inner.estimate_input_tokens(prompt)
        try:
            self.guard.check(price, projected)
        except BudgetExhausted:
            self.refused_prompt = projected
            raise
        self.calls += 1
        self.inner.last_usage = None
        try:
            text = send()
        except Exception as exc:
            self.health = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:200], "ts": time.time()}
            # A reply the provider billed but the agent cannot use (empty, unreadable) counts as
            # billed; one that failed before any usage was read (a timeout mid-reply) may have been
            # billed for the prompt: count that, estimated. Counting high is the safe side.
            failed = self.inner.last_usage or estimated_usage(prompt, "")
            self.guard.record(self.inner.name, self.inner.model, price, failed, _label.get() + ":failed")
            raise
        self.health = {"ok": True, "ts": time.time()}
        usage = self.inner.last_usage or estimated_usage(prompt, text)
        self.last_usage = usage
        self.tokens += usage.total
        self.smallest_prompt = min(self.smallest_prompt or usage.input_tokens, usage.input_tokens)
        self.usd += price.usd(usage.input_tokens, usage.output_tokens)
        self.guard.record(self.inner.name, self.inner.model, price, usage, _label.get())
        return text

    def refusal(self, input_tokens: int) -> str | None:
        """Which budget ("daily" or "total") a call with a prompt of that size would be refused by."""
        price = price_of(self.inner.name, self.inner.model, self.guard.settings.prices)
        refused = self.guard.refusal(price, input_tokens)
        return refused[0] if refused else None

    def estimate_input_tokens(self, prompt: str) -> int:
        return self.inner.estimate_input_tokens(prompt)

    def context_window(self) -> int | None:
        return self.inner.context_window()

    def prepare(self, prompt: str) -> None:
        self.inner.prepare(prompt)  # no call is sent: nothing to meter

    def check(self) -> None:
        self.inner.check()


def meter(llm: BaseLLM, guard: BudgetGuard) -> MeteredLLM:
    """`llm` behind the budget (an LLM already metered is returned as it is)."""
    if isinstance(llm, MeteredLLM):
        return llm
    return MeteredLLM(llm, guard)
