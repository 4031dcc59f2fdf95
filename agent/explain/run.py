"""explain_post: a Bluesky post in, 3 to 5 cited bullets of background out.

fetch the post (thread, quote, alt texts) → the model searches and fetches, one step at a time
→ it finishes → deterministic checks → a temperature-0 structured self-critique → a failure's
reason goes back into the loop. After `max_iterations` model steps the best attempt so far is
returned, marked as not passing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.errors import LLMError
from agent.explain import checks, prompts, reader
from agent.explain.address import post_address
from agent.explain.errors import ExplainError
from agent.explain.reader import RouterPort
from agent.explain.sources import SourceBook, describe
from agent.llm.base import BaseLLM
from agent.llm.usage import estimated_usage

Progress = Callable[[str], None]
MAX_ITERATIONS = 10


@dataclass
class ExplainResult:
    url: str
    author: str
    post_text: str
    bullets: list[str]
    sources: list[dict[str, Any]]  # the cited sources: {n, url, author, text}
    passed: bool  # checks and critique both passed
    iterations: int
    verdict_reason: str = ""  # the critique's (or the checks') last word
    problems: list[str] = field(default_factory=list)  # deterministic check failures of this answer
    llm_calls: int = 0
    tokens: int = 0  # input + output tokens of every call, as the provider reported them
    searches: list[str] = field(default_factory=list)
    fetches: list[str] = field(default_factory=list)
    citation_validity: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Attempt:
    bullets: list[str]
    problems: list[str]
    critique_passed: bool = False
    reason: str = ""

    def rank(self) -> tuple[int, int, int]:
        return (int(self.critique_passed), -len(self.problems), len(self.bullets))


class _Run:
    def __init__(self, router: RouterPort, llm: BaseLLM, progress: Progress) -> None:
        self.router, self.llm, self.say = router, llm, progress
        self.book = SourceBook()
        self.log: list[str] = []
        self.calls = 0
        self.tokens = 0
        self.searches: list[str] = []
        self.fetches: list[str] = []
        self.empty_searches: list[str] = []

    def ask(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        answer = self.llm.chat_json(prompt, schema)
        usage = self.llm.last_usage or estimated_usage(prompt, str(answer))
        self.tokens += usage.total
        return answer

    def add_thread(self, result: dict[str, Any]) -> int | None:
        """Number the post, its parents, quote and replies as sources; the post's own number."""
        for parent in result.get("parents") or []:
            self.book.add(parent)
        post = result["post"]
        number = self.book.add(post)
        quoted = post.get("quoted")
        if isinstance(quoted, dict):
            self.book.add(quoted)
        for reply in result.get("replies") or []:
            self.book.add(reply)
        return number

    def search(self, query: str) -> None:
        query = " ".join(query.split())[:200]
        if not query:
            self.log.append("search: (empty query, nothing done)")
            return
        self.searches.append(query)
        self.say(f"search: {query}")
        found = reader.search_posts(self.router, query)
        numbers = [n for n in (self.book.add(p) for p in found) if n is not None]
        if not numbers:
            self.empty_searches.append(query)
        self.log.append(f"search {query!r}: " + (f"sources {numbers}" if numbers else "no posts matched"))

    def fetch(self, address: str) -> None:
        try:
            address = post_address(address)
        except ExplainError as exc:
            self.log.append(f"fetch {address[:80]!r}: {exc.message}")
            return
        self.fetches.append(address)
        self.say(f"fetch: {address}")
        try:
            number = self.add_thread(reader.fetch_post(self.router, address))
        except ExplainError as exc:
            if exc.kind == "router_down":
                raise
            self.log.append(f"fetch {address}: {exc.message}")
            return
        self.log.append(f"fetch {address}: source [{number}] and its thread")


def _context_of(result: dict[str, Any]) -> str:
    """The post as a reader sees it: the thread above, the post, the quoted post."""
    lines = []
    for parent in result.get("parents") or []:
        lines.append(
            f"(earlier in the thread) @{parent.get('author', '?')}: "
            + (describe(parent) or str(parent.get("unavailable") or ""))
        )
    post = result["post"]
    lines.append(f"(THE POST) {describe(post)}")
    quoted = post.get("quoted")
    if isinstance(quoted, dict):
        lines.append(
            f"(quoted post) @{quoted.get('author', '?')}: "
            + (describe(quoted) or str(quoted.get("unavailable") or ""))
        )
    return "\n".join(lines)


def explain_post(
    address: str,
    router: RouterPort,
    llm: BaseLLM,
    progress: Progress | None = None,
    max_iterations: int = MAX_ITERATIONS,
) -> ExplainResult:
    """Explain the post at `address`; raises ExplainError when it cannot be read or explained."""
    say = progress or (lambda _line: None)
    url = post_address(address)
    run = _Run(router, llm, say)
    say(f"fetch: {url}")
    target = reader.fetch_post(router, url)
    post = target["post"]
    target_number = run.add_thread(target)
    block = prompts.post_block(post, _context_of(target))
    best: _Attempt | None = None
    feedback = ""
    for iteration in range(1, max_iterations + 1):
        say(f"iteration {iteration}/{max_iterations}")
        prompt = prompts.step_prompt(
            block, run.book.fenced(), run.log, feedback, max_iterations - iteration + 1
        )
        try:
            step = run.ask(prompt, prompts.STEP_SCHEMA)
        except LLMError as exc:
            if best is None:
                raise ExplainError("llm_failed", f"the model failed: {exc}") from None
            say(f"model failed ({exc}); returning the best attempt")
            break
        if step["action"] == "search":
            run.search(step["query"])
            continue
        if step["action"] == "fetch":
            run.fetch(step["url"])
            continue
        attempt = _Attempt([b.strip() for b in step["bullets"]], [])
        attempt.problems = checks.problems(attempt.bullets, run.book, str(post.get("text") or ""))
        attempt.problems += [
            f"bullet {i} cites the post itself [{target_number}]; cite background sources"
            for i, b in enumerate(attempt.bullets, 1)
            if checks.citations(b) and set(checks.citations(b)) == {target_number}
        ]
        if attempt.problems:
            attempt.reason = "; ".join(attempt.problems)
            say(f"checks: fail ({attempt.reason})")
        else:
            say("checks: pass")
            try:
                verdict = run.ask(
                    prompts.critique_prompt(block, run.book.fenced(), attempt.bullets),
                    prompts.CRITIQUE_SCHEMA,
                )
            except LLMError as exc:
                verdict = {"verdict": "fail", "reason": f"the critique call failed: {exc}"}
            attempt.critique_passed = verdict["verdict"] == "pass"
            attempt.reason = verdict["reason"]
            say(f"critique: {verdict['verdict']} ({attempt.reason})")
        if best is None or attempt.rank() > best.rank():
            best = attempt
        if attempt.critique_passed:
            return _result(url, post, run, attempt, iteration)
        feedback = attempt.reason
        run.log.append(f"finish: rejected ({attempt.reason[:300]})")
    if run.searches and run.empty_searches == run.searches and not run.fetches:
        raise ExplainError(
            "search_empty",
            "Bluesky search found nothing for "
            + ", ".join(repr(q) for q in run.empty_searches)
            + "; there is no context to cite, so no explanation was made",
        )
    if best is None:
        raise ExplainError("read_failed", f"the model gave no answer in {max_iterations} steps")
    say(f"no passing answer after {max_iterations} iterations; returning the best attempt")
    return _result(url, post, run, best, max_iterations)


def _result(url: str, post: dict[str, Any], run: _Run, attempt: _Attempt, iterations: int) -> ExplainResult:
    cited = sorted({n for b in attempt.bullets for n in checks.citations(b)})
    sources = [s.to_json() for n in cited if (s := run.book.get(n)) is not None]
    return ExplainResult(
        url=url,
        author=str(post.get("author") or ""),
        post_text=str(post.get("text") or ""),
        bullets=attempt.bullets,
        sources=sources,
        passed=attempt.critique_passed and not attempt.problems,
        iterations=iterations,
        verdict_reason=attempt.reason,
        problems=attempt.problems,
        llm_calls=run.calls,
        tokens=run.tokens,
        searches=run.searches,
        fetches=run.fetches,
        citation_validity=checks.citation_validity(attempt.bullets, run.book),
    )
