"""The eval results as one self-contained HTML page: the summary, then one row per post that
opens to show its bullets, sources and the judge's reason; a button shows only the failures."""

from __future__ import annotations

from html import escape
from typing import Any

_STYLE = """body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;
vertical-align:top}.PASS{color:#176b2c;font-weight:bold}.FAIL{color:#a4161a;font-weight:bold}
.metrics{width:auto}.metrics td{border:none;padding:.1rem 1rem .1rem 0}
ol.sources{list-style:none;padding-left:1rem}details{margin:.2rem 0}summary{cursor:pointer}
body.failures-only tr.post.passed{display:none}"""
_SCRIPT = """function toggleFailures(button){document.body.classList.toggle('failures-only');
const only=document.body.classList.contains('failures-only');
button.textContent=only?'Show all posts':'Show failures only';}"""
_METRICS = [
    ("pass_rate", "Pass rate (judge ≥ 6)", "{:.0%}"),
    ("mean_score", "Mean judge score", "{:.1f}"),
    ("explainer_pass_rate", "Explainer self-critique pass rate", "{:.0%}"),
    ("citation_validity_rate", "Citation validity rate", "{:.0%}"),
    ("bullets_per_answer", "Bullets per answer", "{:.1f}"),
    ("iterations_per_post", "Iterations per post", "{:.1f}"),
    ("llm_calls_per_post", "LLM calls per post", "{:.1f}"),
    ("tokens_per_post", "Tokens per post", "{:.0f}"),
    ("errors", "Errors", "{}"),
]


def _link(url: str, label: str) -> str:
    """A link to a post's bsky.app page; anything else (javascript:, another host) is plain text."""
    if not url.startswith("https://bsky.app/profile/"):
        return f"{escape(label)} ({escape(url)})"
    return f'<a href="{escape(url)}" rel="noreferrer noopener">{escape(label)}</a>'


def _post_row(outcome: dict[str, Any]) -> str:
    verdict = "PASS" if outcome["passed"] else "FAIL"
    bullets = "".join(f"<li>{escape(b)}</li>" for b in outcome.get("bullets", []))
    sources = "".join(
        f"<li>[{escape(str(s['n']))}] {_link(str(s['url']), '@' + str(s['author']))}: "
        f"{escape(str(s['text']))}</li>"
        for s in outcome.get("sources", [])
    )
    problem = (
        f"<p>Error: {escape(outcome['error'])}: {escape(outcome['message'])}</p>"
        if "error" in outcome
        else ""
    )
    detail = (
        f"<details><summary>{escape(outcome['id'])}</summary>{problem}<ul class='bullets'>{bullets}</ul>"
        f"<p>Sources:</p><ol class='sources'>{sources}</ol><p>Gold: {escape(outcome['gold_summary'])}</p>"
        f"<p>Judge: {escape(str(outcome.get('judge_reason', '')))}</p></details>"
    )
    cells = [
        detail,
        escape(outcome["category"]),
        f"<span class='{verdict}'>{verdict}</span>",
        f"{outcome['score']}/10",
        f"{outcome.get('citation_validity', 0):.0%}",
        str(len(outcome.get("bullets", []))),
        str(outcome.get("iterations", "-")),
        str(outcome.get("llm_calls", "-")),
        str(outcome.get("tokens", "-")),
    ]
    row_class = "post passed" if outcome["passed"] else "post failed"
    return (
        f"<tr class='{row_class}' id='post-{escape(outcome['id'])}'>"
        + "".join(f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )


def render_report(results: dict[str, Any]) -> str:
    summary = results["summary"]
    metrics = "".join(
        f"<tr><td>{label}</td><td id='metric-{key}'>{fmt.format(summary[key])}</td></tr>"
        for key, label, fmt in _METRICS
    )
    head = [
        "Post",
        "Category",
        "Verdict",
        "Judge",
        "Citations valid",
        "Bullets",
        "Iterations",
        "LLM calls",
        "Tokens",
    ]
    rows = "".join(_post_row(o) for o in results["posts"])
    title = f"Explainer eval — {results['provider']} {'live' if results['live'] else 'offline'}"
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>
<h1>{escape(title)}</h1><p>Run {escape(results["started_at"])}, model {escape(results["model"])},
{summary["passed"]} of {summary["posts"]} posts passed.</p>
<table class="metrics">{metrics}</table>
<p><button id="failures-toggle" onclick="toggleFailures(this)">Show failures only</button></p>
<table id="posts"><thead><tr>{"".join(f"<th>{h}</th>" for h in head)}</tr></thead>
<tbody>{rows}</tbody></table>
</body></html>
"""
