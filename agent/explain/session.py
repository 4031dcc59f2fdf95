"""One explainer run's state and its only tools: the model's calls (each checked against the
budget before it is sent, by the metered provider) and the two reads, SEARCH_POSTS and
FETCH_POST. Nothing here can post, like or act: the explainer reaches no other router skill."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.errors import BudgetExhausted, LLMError
from agent.explain import reader
from agent.explain.address import post_address
from agent.explain.errors import ExplainError
from agent.explain.reader import RouterPort
from agent.explain.sources import SourceBook, outside
from agent.llm.base import BaseLLM
from agent.llm.structured import parse_structured
from agent.llm.usage import estimated_usage

Progress = Callable[[str], None]


class BadAnswer(LLMError):
    """The model answered, but not with a JSON object of the asked schema."""


class Session:
    def __init__(self, router: RouterPort, llm: BaseLLM, progress: Progress) -> None:
        self.router, self.llm, self.say = router, llm, progress
        self.book = SourceBook()
        self.log: list[str] = []
        self.calls = 0  # calls sent to the model (a call the budget refused is not one)
        self.tokens = 0
        self.searches: list[str] = []
        self.fetches: list[str] = []
        self.empty_searches: list[str] = []

    def ask(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The model's answer. BudgetExhausted (nothing sent), LLMError (the provider failed) or
        BadAnswer (it answered junk, which still cost its tokens)."""
        try:
            text = self.llm.chat_structured(prompt, schema)
        except LLMError as exc:
            if not isinstance(exc, BudgetExhausted):
                self.calls += 1
                self.tokens += estimated_usage(prompt, "").total
            raise
        self.calls += 1
        self.tokens += (self.llm.last_usage or estimated_usage(prompt, text)).total
        try:
            return parse_structured(self.llm.name, text, schema)
        except LLMError as exc:
            raise BadAnswer(self.llm.name, str(exc).removeprefix(f"{self.llm.name}: ")) from None

    def note(self, line: str) -> None:
        """A line of what was done, for the model's next prompt (outside text in it withheld/cut)."""
        self.log.append(outside(line, 400))

    def add_thread(self, result: dict[str, Any]) -> int | None:
        """Number the post, its parents, quote and replies as sources; the post's own number."""
        for parent in result["parents"]:
            self.book.add(parent)
        post = result["post"]
        number = self.book.add(post)
        if "quoted" in post:
            self.book.add(post["quoted"])
        for reply in result["replies"]:
            self.book.add(reply)
        return number

    def search(self, query: str) -> None:
        """Search Bluesky; a failed search (other than the router being down) is noted, not fatal."""
        query = " ".join(query.split())[:200]
        if not query:
            self.note("search: (empty query, nothing done)")
            return
        self.searches.append(query)
        self.say(f"searching Bluesky: {query}")
        try:
            found = reader.search_posts(self.router, query)
        except ExplainError as exc:
            if exc.kind in ("router_down", "router_timeout"):
                raise
            self.note(f"search {query!r} failed: {exc.message}")
            return
        numbers = [n for n in (self.book.add(p) for p in found) if n is not None]
        if not numbers:
            self.empty_searches.append(query)
        self.note(f"search {query!r}: " + (f"sources {numbers}" if numbers else "no posts matched"))

    def fetch(self, address: str) -> None:
        try:
            address = post_address(address)
        except ExplainError as exc:
            self.note(f"fetch: not done, {exc.message}")
            return
        self.fetches.append(address)
        self.say(f"reading the post: {address}")
        try:
            number = self.add_thread(reader.fetch_post(self.router, address))
        except ExplainError as exc:
            if exc.kind in ("router_down", "router_timeout"):
                raise
            self.note(f"fetch {address}: {exc.message}")
            return
        self.note(f"fetch {address}: source [{number}] and its thread")
