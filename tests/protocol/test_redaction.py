"""The one redactor catches a secret in every spelling a real client or server writes it in."""

import base64
import html
import json
import re
from urllib.parse import quote, quote_plus

import pytest

from protocol.redaction import REDACTED, Redactor

KEY = "sk_live/Ab3+xY9=Qz7&k<2>"  # URL-, HTML- and JSON-unsafe characters on purpose
PLAIN = "tok-" + "9f3Kq7Zx2Lm8Wv4R"


def url_every_byte(raw, upper):
    return "".join(f"%{b:02X}" if upper else f"%{b:02x}" for b in raw)


def mime_base64(raw):
    return base64.encodebytes(b"x" * 50 + raw + b" trailing bytes").decode()  # 76 columns, the key across a line break


def spellings(secret):
    """What a real client or server makes of a value it carries: URL, JSON and HTML escapes,
    base64 and base64url at each alignment, hex, another case, line breaks."""
    raw = secret.encode()
    return {
        "plain": secret,
        "url upper": quote(secret, safe=""),
        "url lower": re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")),
        "url mixed": "".join(f"%{b:02x}" if i % 2 else f"%{b:02X}" for i, b in enumerate(raw)),
        "url plus": quote_plus(secret + " x"),
        "url keeping slashes": quote(secret),
        "url as encodeURIComponent": quote(secret, safe="!*'()"),
        "url every byte lower": url_every_byte(raw, upper=False),
        "url every byte upper": url_every_byte(raw, upper=True),
        "url double": quote(quote(secret, safe=""), safe=""),
        "hex lower": raw.hex(),
        "hex upper": raw.hex().upper(),
        "html named": html.escape(secret),
        "html named, quotes kept": html.escape(secret, quote=False),
        "html decimal": "".join(f"&#{ord(c)};" for c in secret),
        "html hex": "".join(f"&#x{ord(c):x};" for c in secret),
        "json escaped": json.dumps(secret, ensure_ascii=True)[1:-1],
        "json with escaped slashes": json.dumps(secret)[1:-1].replace("/", "\\/"),
        "json html-safe": json.dumps(secret)[1:-1].replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"),
        "json unicode": "".join(f"\\u{ord(c):04x}" for c in secret),
        "json unicode upper": "".join(f"\\u{ord(c):04X}" for c in secret),
        "base64": base64.b64encode(raw).decode(),
        "base64 urlsafe": base64.urlsafe_b64encode(raw).decode(),
        "base64 no padding": base64.b64encode(raw).decode().rstrip("="),
        "base64 of Bearer": base64.b64encode(b"Bearer " + raw).decode(),
        "base64 of Basic user:key": base64.b64encode(b"me:" + raw).decode(),
        "base64 at offset 1": base64.b64encode(b"a" + raw + b"cd").decode(),
        "base64 at offset 2": base64.b64encode(b"ab" + raw + b"cd").decode(),
        "base64 urlsafe at offset 1 no padding": base64.urlsafe_b64encode(b"{" + raw).decode().rstrip("="),
        "base64 in a query": quote(base64.b64encode(b"ab" + raw).decode(), safe=""),
        "base64 mime lines": mime_base64(raw),
        "newline per character": "\n".join(secret),
        "cut by a CRLF": secret[:7] + "\r\n" + secret[7:],
        "cut by an escaped line break": secret[:7] + "\\n" + secret[7:],
        "upper case": secret.upper(),
        "lower case": secret.lower(),
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
    assert not redactor.finds(out), (form, out)  # nothing of it is left that still counts


def test_a_value_keeps_its_shape():
    redactor = Redactor([PLAIN])
    out = redactor.value({"a": [PLAIN, "ok"], "b": (f"x {PLAIN}", 7), 3: None, PLAIN: 1})
    assert out == {"a": [REDACTED, "ok"], "b": [f"x {REDACTED}", 7], "3": None, REDACTED: 1}


def test_ordinary_text_and_plain_words_of_a_key_survive():
    redactor = Redactor(["moltbook_sk_" + "Zq8Rt5Lw2Kx9"])
    text = "see https://www.moltbook.com/post/123 and the moltbook feed"
    assert redactor.text(text) == text


def test_token_shapes_without_a_loaded_secret():
    redactor = Redactor([])
    for sample in ("password: hunter2hunter2", "bot123456789:" + "A" * 35, "api_key=abcd1234efgh"):
        assert REDACTED in redactor.text(sample), sample


def test_half_an_emoji_is_searched_around_not_a_crash():
    redactor = Redactor([PLAIN])
    assert redactor.text(f"\udc00 {PLAIN} \ud83d") == f"\udc00 {REDACTED} \ud83d"
    assert redactor.value({"name": "Mallory \udc00"}) == {"name": "Mallory \udc00"}


def test_short_texts_and_texts_already_redacted_come_back_unchanged():
    redactor = Redactor([KEY, PLAIN])
    for text in ("", "ok", "pong", REDACTED, f"a {REDACTED} b", "\u200b"):
        assert redactor.text(text) == text
    once = redactor.text(f"x {spellings(KEY)['url double']} y {spellings(PLAIN)['base64 mime lines']}")
    assert redactor.text(once) == once


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


def test_an_id_sharing_digits_with_a_token_is_not_the_token_however_often_it_is_written():
    token = "1849201736522938112-at-cli-9012"
    post_id = "1849201736522938999"
    text = f'{{"id": "{post_id}", "url": "https://x.com/me/status/{post_id}"}}'
    assert Redactor([token]).text(text) == text


def test_a_plain_word_of_a_secret_elsewhere_in_the_text_stays():
    secret = "planted-secret-Zq9/+x&y=1"
    text = f"bad password {{SECRET}} and {secret}"
    assert Redactor([secret]).text(text) == f"bad password {{SECRET}} and {REDACTED}"
