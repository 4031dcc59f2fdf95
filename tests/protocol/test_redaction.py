"""The one redactor catches a secret in every spelling a careless platform echoes it in."""

import base64
import html
import json
import re
from urllib.parse import quote, quote_plus

import pytest

from protocol.redaction import REDACTED, Redactor

KEY = "sk_live/Ab3+xY9=Qz7&k<2>"  # URL-, HTML- and JSON-unsafe characters on purpose
PLAIN = "tok-" + "9f3Kq7Zx2Lm8Wv4R"


def full_width(text):
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in text)


def spellings(secret):
    raw = secret.encode()
    return {
        "plain": secret,
        "url upper": quote(secret, safe=""),
        "url lower": re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")),
        "url mixed": "".join(f"%{b:02x}" if i % 2 else f"%{b:02X}" for i, b in enumerate(raw)),
        "url plus": quote_plus(secret + " x"),
        "hex lower": raw.hex(),
        "hex upper": raw.hex().upper(),
        "html named": html.escape(secret),
        "html decimal": "".join(f"&#{ord(c)};" for c in secret),
        "html hex": "".join(f"&#x{ord(c):x};" for c in secret),
        "full width": full_width(secret),
        "json escaped": json.dumps(secret, ensure_ascii=True)[1:-1],
        "json unicode": "".join(f"\\u{ord(c):04x}" for c in secret),
        "base64": base64.b64encode(raw).decode(),
        "base64 urlsafe": base64.urlsafe_b64encode(raw).decode(),
        "base64 of Bearer": base64.b64encode(b"Bearer " + raw).decode(),
        "base64 of Basic user:key": base64.b64encode(b"me:" + raw).decode(),
        "base64 at offset 2": base64.b64encode(b"ab" + raw + b"cd").decode(),
        "reversed": secret[::-1],
    }


@pytest.mark.parametrize("secret", [KEY, PLAIN])
@pytest.mark.parametrize("form", sorted(spellings(KEY)))
def test_every_spelling_of_a_secret_is_redacted(secret, form):
    redactor = Redactor([secret])
    shown = spellings(secret)[form]
    out = redactor.text(f"the platform said: {shown} (ok)")
    assert REDACTED in out, (form, out)
    assert secret not in out and shown not in out
    assert redactor.finds(shown)


def test_a_secret_split_across_two_fields_is_redacted_in_both():
    redactor = Redactor([PLAIN])
    reply = {"first": PLAIN[:9], "second": PLAIN[9:], "ok": True}
    out = redactor.value(reply)
    assert out["first"] == REDACTED and out["second"] == REDACTED


def test_a_piece_inside_other_text_is_widened_to_the_whole_run():
    redactor = Redactor([PLAIN])
    out = redactor.text(f"id={PLAIN[2:14]}&next=1")
    assert out == f"id={REDACTED}&next=1"


def test_ordinary_text_and_plain_words_of_a_key_survive():
    redactor = Redactor(["moltbook_sk_" + "Zq8Rt5Lw2Kx9"])
    text = "see https://www.moltbook.com/post/123 and the moltbook feed"
    assert redactor.text(text) == text


def test_token_shapes_without_a_loaded_secret():
    redactor = Redactor([])
    for sample in ("password: hunter2hunter2", "bot123456789:" + "A" * 35, "api_key=abcd1234efgh"):
        assert REDACTED in redactor.text(sample), sample


def test_the_agent_logs_and_llm_errors_use_the_same_redactor(tmp_path):
    import logging

    from agent.llm.redact import redact
    from agent.logs import setup_logging

    assert REDACTED in redact(f"bad key {spellings(KEY)['url lower']}", KEY)
    setup_logging(tmp_path / "agent.log", [KEY])
    try:
        logging.getLogger("safeclaw.test").warning("echo %s", base64.b64encode(b"Bearer " + KEY.encode()).decode())
        for handler in logging.getLogger().handlers:
            handler.flush()
        text = (tmp_path / "agent.log").read_text()
    finally:
        for handler in list(logging.getLogger().handlers):
            logging.getLogger().removeHandler(handler)
            handler.close()
    assert REDACTED in text and base64.b64encode(KEY.encode()).decode()[:8] not in text
