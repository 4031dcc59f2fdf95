"""What the loop itself says, when the model cannot answer a turn: its failures and its limits.

A turn's answer is the model's; these are the few replies and hints the loop writes in its place:
the language model unreachable (or its answer refused), a malformed action block (the hint the model
is shown, and the reply once it has had its retries), the step bound reached.
"""

from __future__ import annotations

from typing import Any

from agent.errors import LLMError, ModelAnswerRefused, ToolCodeError


def llm_failure(exc: LLMError) -> str:
    if isinstance(exc, ModelAnswerRefused):
        return exc.reply
    hint = f" {exc.hint}" if exc.hint else ""
    return f"Sorry, I could not reach my language model ({exc}).{hint} Your message is saved; try again."


def malformed_step(step: int, exc: ToolCodeError) -> dict[str, Any]:
    """The artifact's step for a malformed action block: what the model sees before it answers again."""
    return {
        "step": step,
        "error": "invalid_tool_code",
        "detail": str(exc),
        "hint": "Answer again with a valid action block (a JSON list), or in plain text.",
    }


def gave_up_on_format(exc: ToolCodeError) -> str:
    return (
        "Sorry, I could not work out a valid action for that, so I did nothing. "
        f"(The model's last attempt was malformed: {exc})"
    )


def stopped_at_bound(last_message: str, max_steps: int) -> str:
    return (last_message + "\n\n" if last_message else "") + (
        f"(I stopped after {max_steps} steps; the results so far are in artifact.json.)"
    )
