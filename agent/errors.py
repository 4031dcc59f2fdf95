"""Errors of the agent process. Each says what went wrong and how to fix it."""

import logging


class AgentError(Exception):
    """Base class of every error the agent raises on purpose."""


class ConfigError(AgentError):
    """config.json or the environment is missing something or holds a bad value."""


class StateFileError(AgentError):
    """A workspace state file cannot be read; it is never overwritten silently."""


class ToolCodeError(AgentError):
    """The LLM's <tool_code> block is malformed; the message goes back to the LLM."""


class LLMError(AgentError):
    """An LLM provider could not be reached, timed out, or answered an error."""

    log_level = logging.WARNING  # the console shows warnings: one the owner caused is not one

    def __init__(self, provider: str, message: str, hint: str = "") -> None:
        self.provider = provider
        self.hint = hint
        super().__init__(f"{provider}: {message}" + (f" ({hint})" if hint else ""))


class ModelAnswerRefused(LLMError):
    """No answer of the model is used, for a reason of the agent's own; `reply` tells the owner."""

    reply: str


class ReplyStopped(ModelAnswerRefused):
    """The owner stopped this reply (Ctrl-C at the console): its model answer is never acted on."""

    log_level = logging.INFO  # the console says it stopped the reply; no warning over the next prompt

    def __init__(self) -> None:
        self.reply = "(You stopped this reply before it was done; nothing was done for it.)"
        super().__init__("owner", "the owner stopped this reply")


class BudgetExhausted(ModelAnswerRefused):
    """The LLM budget is spent: the call was refused before anything was sent."""

    def __init__(self, which: str, spent: float, limit: float) -> None:
        self.which = which  # "daily" or "total"
        key = "budget.daily_usd" if which == "daily" else "budget.total_usd"
        when = " or wait for tomorrow (00:00 UTC)" if which == "daily" else ""
        self.reply = (
            f"My {which} LLM budget is spent (${spent:.4f} of ${limit:.2f}), so I made no LLM call. "
            f"To go on, raise {key} in agent/config.json{when}."
        )
        super().__init__("budget", f"the {which} budget is spent (${spent:.4f} of ${limit:.2f})",
                         f"raise {key} in agent/config.json{when}")


class CostsUnrecorded(BudgetExhausted):
    """An LLM call's cost could not be written down: no further call is sent until it can be."""

    def __init__(self, path: str, reason: str) -> None:
        message = f"the cost of the last LLM call could not be written to {path} ({reason})"
        LLMError.__init__(self, "budget", message, "free space on that disk; the cost waits in memory")
        self.which = "unrecorded"
        self.reply = (
            f"I made no LLM call: the cost of the last one could not be written to {path} ({reason}), and "
            "an uncounted call could pass your budget unseen. Free space on that disk and ask again."
        )


class NotSavedError(StateFileError):
    """A state file could not be written (disk full, read-only, no permission). Its new content is
    kept in memory and written as soon as that works again."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} was not saved: {reason}")


class MessageNotSaved(NotSavedError):
    """The owner's message itself could not be recorded, so the turn did not run."""
