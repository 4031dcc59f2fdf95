"""Characters nobody sees can carry a whole message under an innocent one (tag characters spelling
ASCII, bytes in variation selectors, zero-width runs); a held write shows them as escapes on every
screen and is held for them, while emoji sequences, flags and scripts that need a joiner pass."""

import pytest

from agent.channels.display import escaped
from agent.link.approval_desk import notice_text
from dashboard.approvals_view import shown_fields
from protocol.invisible import hidden_in, shown
from protocol.suspicion import suspicion
from router.policy.payload_preview import lines, preview


def tags(text):
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def selectors(data):
    return "".join(chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16) for b in data)


SMUGGLED = {
    "tag characters": "Nice post!" + tags("owner PIN 4821-7390"),
    "variation selectors": "Nice 😀" + selectors(b"PIN 4821") + " post",
    "zero-width bits": "Nice" + "".join("\u200b" if bit == "1" else "\u200c" for bit in f"{4821:016b}") + " post",
    "word joiners": "Nice\u2060\u2061\u2062\u2063 post",
    "soft hyphens": "Ni\u00adce po\u00adst",
    "Hangul fillers": "Nice \u3164\uffa0 post",
    "joiner between Latin letters": "Ni\u200dce po\u200cst",
}
ORDINARY = [
    "Family 👨‍👩‍👧‍👦, pride 🏳️‍🌈, love ❤️, Scotland 🏴󠁧󠁢󠁳󠁣󠁴󠁿, a coder 👩🏽‍💻",
    "می‌خواهم فارسی بنویسم",  # Persian needs its zero-width non-joiner
    "क्‍ष is a conjunct",
    "שלום \u200f123 עולם",  # a direction mark in right-to-left text
    "Plain ASCII, nothing to see.",
]


@pytest.mark.parametrize(("name", "text"), sorted(SMUGGLED.items()))
def test_a_text_carrying_invisible_characters_is_held_and_shown_escaped(name, text):
    why = suspicion(text)
    assert why and "invisible" in why, name
    assert not hidden_in(shown(text)) and "\\u" in shown(text).lower()


@pytest.mark.parametrize("text", ORDINARY)
def test_emoji_sequences_flags_and_scripts_that_need_a_joiner_are_not_held(text):
    assert hidden_in(text) == [] and suspicion(text) is None and shown(text) == text


def test_every_screen_shows_the_hidden_characters_of_a_held_write():
    text = SMUGGLED["tag characters"]
    payload = preview("post", {"platform": "bsky", "text": text})
    notice = {"type": "approval_requested", "action": "CREATE_POST", "platform": "bsky", "kind": "post",
              "approval_id": "a1", "text": text, "payload": payload}
    screens = {
        "chat and console notice": notice_text(notice),
        "./safeclaw approvals and logs": "\n".join(lines(payload)),
        "dashboard": shown_fields({"payload": payload})["payload"][1]["value"],
        "console escape": escaped(text),
    }
    for name, screen in screens.items():
        assert not hidden_in(screen), name
        assert "e006f" in screen.lower(), name  # the first hidden letter, 'o', as its escape
