"""Text for a terminal: nothing printed may move the cursor, recolour, link or reorder what the owner
sees. A reply, a notice or a progress line can carry a stranger's words (a post, a page title), and
an ESC, a carriage return, an OSC 8 link or a bidi override in them would let that stranger rewrite
the screen. The console's own escapes (the thinking indicator) are written apart, never through here.
"""

from __future__ import annotations

import contextlib
import os
import termios
import textwrap
import unicodedata
from collections.abc import Iterator
from typing import Any, TextIO

from protocol.invisible import hidden_in

# Characters that change the order text is shown in, without being visible themselves.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
LINE_BREAKS = frozenset("\u2028\u2029\x85")  # shown as a new line by some terminals, not by others
KEPT = frozenset("\n\t")


def _hidden(ch: str) -> bool:
    """C0 and C1 controls, DEL, bidi controls and other line breaks; not newline and tab."""
    if ch in KEPT:
        return False
    return ch in BIDI_CONTROLS or ch in LINE_BREAKS or unicodedata.category(ch) == "Cc"


def for_terminal(text: str) -> str:
    """`text` with every control character (but newline and tab) and bidi control dropped."""
    return "".join(ch for ch in text if not _hidden(ch))


def escaped(text: str) -> str:
    """`text` with each such character, and each invisible one (`protocol.invisible`: zero-width,
    tag, selector), shown as its escape (`\\x1b`, `\\u202e`, `\\u200b`) and newlines as `\\n`:
    for text held for the owner's decision, which must be seen exactly as it would go out."""
    out = []
    invisible = set(hidden_in(text))
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif _hidden(ch) or i in invisible:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


# What a terminal that cannot show a character gets instead (a Latin-1 or ASCII locale).
PLAIN = str.maketrans({"✓": "+", "✗": "x", "“": '"', "”": '"', "‘": "'", "’": "'", "…": "...",
                       "—": "-", "–": "-", "→": "->", "•": "*", "·": "-"})


def showable(text: str, stream: TextIO) -> str:
    """`text` as `stream`'s encoding can show it: as it is when it can (UTF-8), else with plain
    look-alikes for the marks and quotes SafeClaw prints and '?' for anything else."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        return text.translate(PLAIN).encode(encoding, "replace").decode(encoding)
    except LookupError:
        return text


def terminal_width(stream: TextIO) -> int | None:
    """The columns of the terminal `stream` writes to; None when it is not a terminal."""
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (OSError, ValueError, AttributeError):
        return None


def wrapped(text: str, width: int | None, hang: str = "") -> str:
    """`text` broken at spaces to lines of at most `width` columns (the terminal would cut words in
    two): its own line breaks and each line's indent kept (plus `hang` on the lines a break makes),
    a word longer than a line (a link) whole."""
    if not width or width < 20:
        return text
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, width, subsequent_indent=indent + hang, break_long_words=False,
                               break_on_hyphens=False, replace_whitespace=False) or [""]
    return "\n".join(lines)


@contextlib.contextmanager
def typing_unseen(stream: TextIO) -> Iterator[None]:
    """While a turn runs: what is typed is not echoed over the thinking indicator; it stays in the
    terminal's buffer (never flushed) and readline shows it at the next prompt."""
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] = saved[3] & ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (OSError, ValueError, AttributeError, termios.error):  # not a terminal
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


class TerminalSettings:
    """The terminal's settings as they were when the console started, to put back at the end
    (readline leaves it without echo and line editing when the process stops mid-read)."""

    def __init__(self, stream: TextIO) -> None:
        self.fd: int | None = None
        self.saved: list[Any] | None = None
        try:
            self.fd = stream.fileno()
            self.saved = termios.tcgetattr(self.fd)
        except (OSError, ValueError, AttributeError, termios.error):  # not a terminal
            self.saved = None

    def restore(self) -> None:
        if self.saved is None or self.fd is None:
            return
        with contextlib.suppress(OSError, ValueError, termios.error):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
