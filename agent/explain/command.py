"""`/explain <url>` and `explain <url>` in the console and on Telegram: the command's answer text,
with the explainer's progress handed to the channel while it works."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.explain.errors import ExplainError
from agent.explain.reader import RouterPort
from agent.explain.render import render_text
from agent.explain.run import Progress, explain_post
from agent.llm.base import BaseLLM

USAGE = "Usage: /explain <post URL> (a bsky.app post URL with a handle or a DID, or an at:// URI)"
_PLAIN = re.compile(r"^\s*explain\s+(\S*(?:bsky\.app/|at://)\S*)\s*$", re.IGNORECASE)


def plain_explain_address(text: str) -> str | None:
    """The address of 'explain <post address>' written without the slash, else None."""
    match = _PLAIN.match(text)
    return match.group(1) if match else None


def explain_reply(
    args: str,
    router: RouterPort,
    llm: BaseLLM,
    progress: Progress | None = None,
    owner_words: Iterable[str] = (),
) -> str:
    """The explanation as chat text, or a plain sentence saying why there is none. `owner_words`:
    the owner's own messages of the conversation (a link in them is shown as written)."""
    address = args.strip()
    if not address:
        return USAGE
    try:
        result = explain_post(address, router, llm, progress, owner_words=owner_words)
    except ExplainError as exc:
        return f"I could not explain that post: {exc.message}"
    return render_text(result)
