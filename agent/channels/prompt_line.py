"""The console's prompt line through readline: Tab completion of the slash commands, drawing the
prompt and the line being typed again (after a notice printed over them), and taking the terminal
again after Ctrl-Z and `fg` (the shell gives it back in its own mode, echoing what is typed).
"""

from __future__ import annotations

import sys

from agent.commands import COMMAND_NAMES, PLATFORMS

PROMPT = "you> "
# Commands whose first argument is a platform name, which Tab also completes.
PLATFORM_FIRST = ("/post", "/notifications", "/reply", "/like", "/delete")


def completions(before: list[str], word: str) -> list[str]:
    """What Tab may complete `word` to, given the words typed before it on the line."""
    if not before:
        return [f"/{name}" for name in COMMAND_NAMES if f"/{name}".startswith(word or "/")]
    if len(before) == 1 and before[0].lower() in PLATFORM_FIRST:
        return [name for name in PLATFORMS if name.startswith(word.lower())]
    return []


def enable_tab_completion(terminal: str = "") -> None:
    """Tab completes slash commands (and platform names) at the interactive prompt; on a terminal
    that is not dumb (`terminal`: its TERM), a pasted text is one message, newlines kept."""
    try:
        import readline
    except ImportError:  # a Python built without readline: typing still works, Tab does not
        return
    found: list[str] = []

    def complete(word: str, state: int) -> str | None:
        if state == 0:
            line = readline.get_line_buffer()
            # Python's readline appends nothing to a completion: the space is ours.
            found[:] = [f"{match} " for match in completions(line[: readline.get_begidx()].split(), word)]
        return found[state] if state < len(found) else None

    if terminal not in ("", "dumb"):
        # Python turns it off; a terminal then sends a pasted text of several lines as several lines.
        readline.parse_and_bind("set enable-bracketed-paste on")
    readline.set_completer_delims(" \t\n")
    readline.set_completer(complete)
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")


def redraw_input_line() -> None:
    """Draw the prompt and the line being typed again (after a notice printed over them)."""
    try:
        import ctypes
        import readline

        ctypes.CDLL(readline.__file__).rl_forced_update_display()
    except (ImportError, OSError, AttributeError):  # no GNU readline: the prompt and buffer by hand
        sys.stdout.write(PROMPT + line_being_typed())
        sys.stdout.flush()


def line_being_typed() -> str:
    try:
        import readline

        return readline.get_line_buffer()
    except ImportError:
        return ""


def take_the_terminal_again() -> None:
    """After `fg`, while the prompt waits: the prompt's own terminal mode again (no echo by the
    terminal, a key at a time), then the prompt and the line being typed drawn again. The shell
    put back its mode when the console stopped, and does not restore the console's."""
    try:
        import ctypes
        import readline

        library = ctypes.CDLL(readline.__file__)
        library.rl_deprep_terminal()  # forgets the mode it set; the shell's is the one to restore
        library.rl_prep_terminal(1)
    except (ImportError, OSError, AttributeError):  # no GNU readline: the terminal stays as it is
        pass
    redraw_input_line()
