"""One line of `status` or `doctor`: what was found, marked as fine or not."""

from __future__ import annotations

from dataclasses import dataclass

OK, FAIL = "✓", "✗"


@dataclass
class Check:
    ok: bool
    text: str  # what was found, or what is wrong and how to fix it

    def line(self) -> str:
        return f"{OK if self.ok else FAIL} {self.text}"
