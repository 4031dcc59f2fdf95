"""One line of `status` or `doctor`: what was found, marked as fine or not."""

from __future__ import annotations

from dataclasses import dataclass

OK, FAIL, NOTICE = "✓", "✗", "!"


@dataclass
class Check:
    ok: bool
    text: str  # what was found, or what is wrong and how to fix it
    notice: bool = False  # no failure, but a state to see at a glance (the kill switch on, a dry run)

    def line(self) -> str:
        return f"{FAIL if not self.ok else NOTICE if self.notice else OK} {self.text}"


def first_line(exc: BaseException) -> str:
    """An error's first line, short enough for one check's line."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
