"""What a newcomer asks the embedded model first, through a real terminal on the whole stack in a
dry run (the walks of issue 31): the time, a reminder, a post's words without quotes, a post said
once, a fact stated to be remembered, how to stop posting, a goodbye. Each answer is plain and
true; nothing is posted that was not asked for."""

from __future__ import annotations

import re

import pytest

from tests.stack.test_console_leaving import needs_model
from tests.stack.test_owner_first_hour import Console


@pytest.mark.slow
@needs_model
def test_everyday_asks_get_plain_true_answers(tmp_path):
    console = Console(tmp_path, [], SAFECLAW_LLM_PROVIDER="local", SAFECLAW_LLM_CACHE_DIR=str(tmp_path / "llm-cache"))
    try:
        clock = console.say("what time is it?")
        assert re.search(r"It is \d\d:\d\d on \w+day", clock), clock
        reminder = console.say("remind me to call mum at 5")
        assert reminder.startswith("I can't set reminders") and "write a post" not in reminder, reminder
        unquoted = console.say("post hello world on bluesky")
        assert 'put them in quotes: post "hello world" on bluesky' in unquoted, unquoted
        assert console.outbox() == []  # words without quotes: shown how, nothing guessed or sent
        posted = console.say('post "Testing" on bluesky')
        assert posted.startswith("Posted on Bluesky (dry run"), posted
        assert "Posting on" not in posted, posted  # the outcome once, not announced first
        assert [entry["params"]["text"] for entry in console.outbox()] == ["Testing"]
        remembered = console.say("remember my favourite food is ramen")
        assert remembered == "Remembered: favourite food = ramen.", remembered  # it stored "is"
        assert console.say("what's my favourite food?") == "You told me: favourite food — ramen."
        stop = console.say("stop posting")
        assert "./safeclaw stop-posting" in stop and "Nothing was done." in stop, stop
        goodbye = console.say("thanks, bye")
        assert goodbye.startswith("Bye! quit (or Ctrl-D) leaves the console"), goodbye
        assert console.leave() == 0
    finally:
        if console.child.isalive():
            console.child.terminate(force=True)
