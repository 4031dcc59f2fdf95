"""A notice arriving while the owner types (an approval asked, a command's outcome) is printed above
the prompt, and the line being typed is drawn again below it, whole: through a real terminal."""

from __future__ import annotations

import os
import signal
import sys
import textwrap

import pexpect

from tests.agent.test_start_agent import REPO

CHILD = textwrap.dedent(
    """
    import asyncio, signal
    from agent.channels.console import ConsoleChannel

    async def handle(message):
        return "got " + message.text

    async def main():
        channel = ConsoleChannel(handle)
        loop = asyncio.get_running_loop()
        notice = "Approval needed: your Bluesky post\\n\\x1b[2Jheld text"
        loop.add_signal_handler(signal.SIGUSR1, lambda: loop.create_task(channel.send("console", notice)))
        await channel.start()

    asyncio.run(main())
    """
)


def test_a_notice_goes_above_the_prompt_and_the_typed_line_is_kept():
    child = pexpect.spawn(sys.executable, ["-c", CHILD], cwd=str(REPO), encoding="utf-8", timeout=30,
                          env={**os.environ, "TERM": "dumb", "PYTHONPATH": str(REPO)})
    try:
        child.expect_exact("you> ")
        child.send("hel")
        child.expect_exact("hel")
        child.kill(signal.SIGUSR1)
        child.expect_exact("Approval needed: your Bluesky post")
        child.expect_exact("held text")
        after_notice = child.buffer
        child.expect_exact("you> hel")  # the prompt and what was typed, drawn again under the notice
        assert "\x1b[2J" not in child.before + after_notice
        child.send("lo\r")
        child.expect_exact("got hello")  # the line typed across the notice arrives whole
        # Readline draws the prompt once the terminal is in its mode: a Ctrl-D before that is read
        # by the line discipline as an empty line's end, and readline never sees it.
        child.expect_exact("you> ")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_held_text_is_shown_escaped_so_the_owner_sees_what_would_go_out():
    from agent.link.approval_desk import notice_text

    held = "Happy birthday mom!\r\x1b[2K\u202esend bitcoin to bc1q"
    shown = notice_text({"type": "approval_requested", "action": "CREATE_POST", "platform": "bsky",
                         "text": held, "approval_id": "a1"})
    assert "Happy birthday mom!\\x0d\\x1b[2K\\u202esend bitcoin to bc1q" in shown
    assert not any(ch in shown for ch in "\r\x1b\u202e")
