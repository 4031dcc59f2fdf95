"""explain_post: a Bluesky post in, 3 to 5 cited bullets of background out.

fetch the post (thread, quote, alt texts) → the model searches and fetches, one step at a time
→ it finishes → deterministic checks → a temperature-0 structured self-critique → a failure's
reason goes back into the loop. After `max_iterations` model steps the best attempt so far is
returned, marked as not passing. A budget that runs out, a model or router that stops
answering mid-loop, also end it with the best attempt so far (`stopped` says why); before any
attempt they are an ExplainError.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agent.errors import BudgetExhausted, LLMError
from agent.explain import checks, prompts, reader
from agent.explain.address import post_address
from agent.explain.errors import ExplainError
from agent.explain.reader import RouterPort
from agent.explain.session import BadAnswer, Progress, Session
from agent.explain.sources import describe, outside
from agent.flow.outside_links import OutsideLinks, mark_all
from agent.llm.base import BaseLLM
from protocol.untrusted import strip_invisible

__all__ = ["MAX_ITERATIONS", "ExplainResult", "Progress", "explain_post"]
MAX_ITERATIONS = 10
EXPLAINER_HOST = "bsky.app"  # the explainer's own links (sources, the post) are pages of this host


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
    stopped: str = ""  # why the loop ended before its last iteration without a pass ("" if it did not)
    outside_links: list[str] = field(default_factory=list)  # hosts and handles marked as outside

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Attempt:
    bullets: list[str]
    problems: list[str]
    critique_passed: bool = False
    reason: str = ""
    stop: str = ""  # set when the loop cannot go on after this attempt (the budget ran out)

    def rank(self) -> tuple[int, int, int]:
        return (int(self.critique_passed), -len(self.problems), len(self.bullets))


def _context_of(result: dict[str, Any]) -> str:
    """The post as a reader sees it: the thread above, the post, the quoted post."""
    lines = []
    for parent in result["parents"]:
        lines.append(
            f"(earlier in the thread) @{parent['author'] or '?'}: "
            + (describe(parent) or parent.get("unavailable", ""))
        )
    post = result["post"]
    lines.append(f"(THE POST) {describe(post)}")
    quoted = post.get("quoted")
    if quoted is not None:
        lines.append(
            f"(quoted post) @{quoted['author'] or '?'}: "
            + (describe(quoted) or quoted.get("unavailable", ""))
        )
    return outside("\n".join(lines), 4000)


class _Stop(Exception):
    """The loop cannot go on (budget, model, router); `message` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def explain_post(
    address: str,
    router: RouterPort,
    llm: BaseLLM,
    progress: Progress | None = None,
    max_iterations: int = MAX_ITERATIONS,
    owner_words: Iterable[str] = (),
) -> ExplainResult:
    """Explain the post at `address`; raises ExplainError when it cannot be read or explained.
    `owner_words`: what the owner wrote besides the address (links in it are shown as written)."""
    owner = [address, *owner_words, EXPLAINER_HOST]
    links = OutsideLinks.for_explain(owner, "")
    shown = progress or (lambda _line: None)

    def say(line: str) -> None:  # progress quotes the model's queries and the critique's reasons
        shown(links.mark(line)[0])

    url = post_address(address)
    run = Session(router, llm, say)
    say(f"reading the post: {url}")
    target = reader.fetch_post(router, url)
    post = target["post"]
    links = OutsideLinks.for_explain(owner, str(post.get("author") or ""))
    target_number = run.add_thread(target)
    block = prompts.post_block(post, _context_of(target))
    best: _Attempt | None = None
    feedback = ""
    iteration = 0
    stopped = ""
    try:
        for iteration in range(1, max_iterations + 1):
            say(f"round {iteration} of {max_iterations}")
            prompt = prompts.step_prompt(
                block, run.book.fenced(), run.log, feedback, max_iterations - iteration + 1
            )
            step = _step(run, prompt, best)
            if step is None:
                feedback = "your last reply was not one JSON object of the asked form; answer again"
                continue
            if step["action"] in ("search", "fetch"):
                _read(run, step, best)
                continue
            attempt = _judge(run, block, post, target_number, step["bullets"])
            if best is None or attempt.rank() > best.rank():
                best = attempt
            if attempt.stop:
                raise _Stop(attempt.stop)
            if attempt.critique_passed:
                return _result(url, post, run, attempt, iteration, links)
            feedback = attempt.reason
            run.note(f"finish: rejected ({attempt.reason[:300]})")
    except _Stop as stop:
        stopped = stop.message
        say(f"{stopped}; returning the best attempt so far")
    if best is None:
        if run.searches and run.empty_searches == run.searches and not run.fetches:
            raise ExplainError(
                "search_empty",
                "Bluesky search found nothing for "
                + ", ".join(repr(q) for q in run.empty_searches)
                + "; there is no context to cite, so no explanation was made",
            )
        raise ExplainError(
            "llm_failed",
            f"the model gave no usable answer in {max_iterations} steps ({feedback or 'no answer'})",
        )
    if not stopped:
        say(f"no passing answer after {max_iterations} iterations; returning the best attempt")
    result = _result(url, post, run, best, iteration, links)
    result.stopped = links.mark(stopped)[0]
    if run.searches and run.empty_searches == run.searches and not run.fetches:
        found_nothing = ", ".join(repr(q) for q in run.empty_searches[:5])
        result.verdict_reason = links.mark(
            f"Bluesky search found nothing for {found_nothing}, so there was no context to cite; "
            + best.reason
        )[0]
    return result


def _step(run: Session, prompt: str, best: _Attempt | None) -> dict[str, Any] | None:
    """The model's next step; None for a junk answer (fed back). A refused or failed call ends
    the loop with the best attempt, or before any attempt is an ExplainError."""
    try:
        return run.ask(prompt, prompts.STEP_SCHEMA)
    except BadAnswer as exc:
        run.say(f"the model's answer was unusable ({exc})")
        return None
    except BudgetExhausted as exc:
        if best is None:
            raise ExplainError("budget_exhausted", exc.reply) from None
        raise _Stop(f"the LLM budget ran out ({exc.reply})") from None
    except LLMError as exc:
        if best is None:
            raise ExplainError("llm_failed", f"the model failed: {exc}") from None
        raise _Stop(f"the model failed ({exc})") from None


def _read(run: Session, step: dict[str, Any], best: _Attempt | None) -> None:
    try:
        if step["action"] == "search":
            run.search(step["query"])
        else:
            run.fetch(step["url"])
    except ExplainError as exc:  # the router went down or stopped answering mid-loop
        if best is None:
            raise
        raise _Stop(exc.message) from None


def _judge(
    run: Session, block: str, post: dict[str, Any], target: int | None, bullets: list[str]
) -> _Attempt:
    """The deterministic checks, then (only if they pass) the critique; the attempt's verdict."""
    attempt = _Attempt([strip_invisible(b).strip() for b in bullets], [])
    attempt.problems = checks.problems(attempt.bullets, run.book, post["text"])
    attempt.problems += [
        f"bullet {i} cites the post itself [{target}]; cite background sources"
        for i, b in enumerate(attempt.bullets, 1)
        if checks.citations(b) and set(checks.citations(b)) == {target}
    ]
    if attempt.problems:
        attempt.reason = "; ".join(attempt.problems)
        run.say(f"checking the answer: not yet ({attempt.reason})")
        return attempt
    run.say("checking the answer: it holds")
    try:
        verdict = run.ask(
            prompts.critique_prompt(block, run.book.fenced(), attempt.bullets), prompts.CRITIQUE_SCHEMA
        )
    except BudgetExhausted as exc:
        attempt.reason = "not critiqued: the LLM budget ran out before the critique call"
        attempt.stop = f"the LLM budget ran out ({exc.reply})"
        return attempt
    except BadAnswer as exc:
        verdict = {"verdict": "fail", "reason": f"the critique's answer was unusable ({exc}); answer again"}
    except LLMError as exc:
        verdict = {"verdict": "fail", "reason": f"the critique call failed: {exc}"}
    attempt.critique_passed = verdict["verdict"] == "pass"
    attempt.reason = outside(verdict["reason"], 400)
    run.say(f"second reading: {verdict['verdict']} ({attempt.reason})")
    return attempt


def _result(
    url: str, post: dict[str, Any], run: Session, attempt: _Attempt, iterations: int, links: OutsideLinks
) -> ExplainResult:
    """The attempt as the owner is shown it: every outside host and handle marked (the checks
    ran on the bullets as the model wrote them)."""
    cited = sorted({n for b in attempt.bullets for n in checks.citations(b)})
    sources = [s.to_json() for n in cited if (s := run.book.get(n)) is not None]
    for source in sources:
        source["shown_author"] = links.mark("@" + source["author"])[0]
    bullets, marked = mark_all(attempt.bullets, links)
    problems, _ = mark_all(attempt.problems, links)
    return ExplainResult(
        url=url,
        author=outside(post["author"], 100),
        post_text=outside(post["text"], 4000),
        bullets=bullets,
        sources=sources,
        passed=attempt.critique_passed and not attempt.problems,
        iterations=iterations,
        verdict_reason=links.mark(attempt.reason)[0],
        problems=problems,
        outside_links=marked,
        llm_calls=run.calls,
        tokens=run.tokens,
        searches=run.searches,
        fetches=run.fetches,
        citation_validity=checks.citation_validity(attempt.bullets, run.book),
    )
