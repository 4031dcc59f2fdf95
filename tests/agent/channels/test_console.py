"""The console channel on a pipe: every line is one message, every reply one line on stdout."""

import asyncio
import io

from agent.channels.console import ConsoleChannel


def run_console(raw: bytes, errors: str = "strict"):
    stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors=errors)
    stdout = io.StringIO()
    seen = []

    async def handle(message):
        seen.append(message.text)
        return f"got {len(seen)}"

    async def main():
        # A bound only so a regression fails instead of hanging the suite.
        await asyncio.wait_for(ConsoleChannel(handle, stdin, stdout).start(), 30)

    asyncio.run(main())
    return seen, stdout.getvalue().splitlines()


def test_each_line_is_a_message_and_end_of_input_returns():
    seen, out = run_console(b"one\n\n  two  \n")
    assert seen == ["one", "two"]
    assert out == ["got 1", "got 2"]


def test_a_line_that_is_not_utf8_is_read_with_a_replacement_and_nothing_is_lost():
    seen, out = run_console(b"first\ncaf\xe9 bad byte\nthird\n")
    assert seen == ["first", "caf\ufffd bad byte", "third"]
    assert out == ["got 1", "got 2", "got 3"]


def test_surrogate_escapes_from_a_c_locale_stdin_are_replaced_too():
    seen, _ = run_console(b"caf\xe9\n", errors="surrogateescape")
    assert seen == ["caf\ufffd"]
