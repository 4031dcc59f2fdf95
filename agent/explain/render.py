"""An ExplainResult as text a person reads: bullets, then the numbered sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.explain.run import ExplainResult


def render_text(result: ExplainResult) -> str:
    lines = [f"Background for @{result.author}'s post ({result.url}):", ""]
    lines += [f"• {bullet}" for bullet in result.bullets]
    lines += ["", "Sources:"]
    lines += [f"[{s['n']}] {s.get('shown_author') or '@' + s['author']}: {s['url']}"
              for s in result.sources] or ["(none)"]
    if not result.passed:
        lines += ["", f"(Not passing after {result.iterations} iterations: {result.verdict_reason})"]
    if result.stopped:
        lines += [f"(Stopped early: {result.stopped}; this is the best attempt so far.)"]
    return "\n".join(lines)
