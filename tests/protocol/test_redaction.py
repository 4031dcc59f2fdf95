"""The one redactor catches a secret in every spelling a careless platform echoes it in."""

import base64
import bz2
import codecs
import gzip
import html
import json
import lzma
import quopri
import re
import zlib
from urllib.parse import quote, quote_plus

import pytest

from protocol.redaction import REDACTED, Redactor

KEY = "sk_live/Ab3+xY9=Qz7&k<2>"  # URL-, HTML- and JSON-unsafe characters on purpose
PLAIN = "tok-" + "9f3Kq7Zx2Lm8Wv4R"


def full_width(text):
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in text)


def math_bold(text):
    def one(c):
        if c.isascii() and c.isupper():
            return chr(0x1D400 + ord(c) - ord("A"))
        if c.isascii() and c.islower():
            return chr(0x1D41A + ord(c) - ord("a"))
        if c.isascii() and c.isdigit():
            return chr(0x1D7CE + ord(c) - ord("0"))
        return c

    return "".join(one(c) for c in text)


CYRILLIC = str.maketrans("aceiopsxyAEKMHOPCTXkB", "асеіорѕхуАЕКМНОРСТХкВ")


def interleave(text, mark):
    return mark.join(text)


def url_every_byte(raw, upper):
    return "".join(f"%{b:02X}" if upper else f"%{b:02x}" for b in raw)


def mime_base64(raw):
    return base64.encodebytes(b"x" * 50 + raw + b" trailing bytes").decode()  # 76 columns, the key across a line break


def base32_at(raw, offset):
    return base64.b32encode(b"\0" * offset + raw).decode()


def quoted_printable_every_byte(raw):
    return "".join(f"={b:02X}" for b in raw)


def rot47(text):
    return "".join(chr(33 + (ord(c) - 33 + 47) % 94) if 33 <= ord(c) <= 126 else c for c in text)


def pieces_reversed(text, size):
    return "".join(reversed([text[i : i + size] for i in range(0, len(text), size)]))


def hidden_spellings(secret):
    """Spellings that hide a key inside a blob or reorder it: wave 3's round (issue 18, item 10)."""
    raw = secret.encode()
    b64 = base64.b64encode
    return {
        "gzip in base64": b64(gzip.compress(raw)).decode(),
        "zlib in base64": b64(zlib.compress(raw)).decode(),
        "bz2 in base64": b64(bz2.compress(raw)).decode(),
        "xz in base64": b64(lzma.compress(raw)).decode(),
        "gzip in hex": gzip.compress(raw).hex(),
        "zlib in base64 in hex": b64(zlib.compress(raw)).hex(),
        "base64 of base64": b64(b64(raw)).decode(),
        "base85": base64.b85encode(raw).decode(),
        "ascii85": base64.a85encode(raw, adobe=True).decode(),
        "ascii85 without delimiters": base64.a85encode(raw).decode(),
        "base85 of gzip": base64.b85encode(gzip.compress(raw)).decode(),
        "octal codes": "".join(f"\\{b:03o}" for b in raw),
        "octal codes spaced": " ".join(f"{b:03o}" for b in raw),
        "decimal codes": " ".join(str(b) for b in raw),
        "decimal codes with commas": ",".join(str(b) for b in raw),
        "utf-16 hex": secret.encode("utf-16-le").hex(),
        "utf-16 big-endian hex spaced": secret.encode("utf-16-be").hex(" "),
        "utf-32 hex": secret.encode("utf-32-le").hex(),
        "every character doubled": "".join(c * 2 for c in secret),
        "rot47": rot47(secret),
        "rot47 reversed": rot47(secret)[::-1],
        "6-character pieces in reverse order": pieces_reversed(secret, 6),
        "7-character pieces in reverse order": pieces_reversed(secret, 7),
        "6-character pieces reversed, spaced": " ".join(reversed([secret[i : i + 6] for i in range(0, len(secret), 6)])),
    }


def spellings(secret):
    raw = secret.encode()
    rev = secret[::-1]
    return hidden_spellings(secret) | {
        "plain": secret,
        "url upper": quote(secret, safe=""),
        "url lower": re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")),
        "url mixed": "".join(f"%{b:02x}" if i % 2 else f"%{b:02X}" for i, b in enumerate(raw)),
        "url plus": quote_plus(secret + " x"),
        "url every byte lower": url_every_byte(raw, upper=False),
        "url every byte upper": url_every_byte(raw, upper=True),
        "url double": quote(quote(secret, safe=""), safe=""),
        "url triple": quote(quote(quote(secret, safe=""), safe=""), safe=""),
        "url double every byte": quote(url_every_byte(raw, upper=False), safe=""),
        "hex lower": raw.hex(),
        "hex upper": raw.hex().upper(),
        "hex colons": raw.hex(":"),
        "hex spaced upper": raw.hex(" ").upper(),
        "hex 0x list": ", ".join(f"0x{b:02x}" for b in raw),
        "hex backslash x": "".join(f"\\x{b:02x}" for b in raw),
        "html named": html.escape(secret),
        "html decimal": "".join(f"&#{ord(c)};" for c in secret),
        "html hex": "".join(f"&#x{ord(c):x};" for c in secret),
        "html decimal no semicolons": "".join(f"&#{ord(c)}" for c in secret),
        "html hex no semicolons upper": "".join(f"&#X{ord(c):X}" for c in secret),
        "html zero padded": "".join(f"&#00{ord(c)};" for c in secret),
        "html double escaped": html.escape("".join(f"&#{ord(c)};" for c in secret)),
        "html of url encoding": html.escape(quote(secret, safe="")).replace("%", "&#37;"),
        "full width": full_width(secret),
        "json escaped": json.dumps(secret, ensure_ascii=True)[1:-1],
        "json unicode": "".join(f"\\u{ord(c):04x}" for c in secret),
        "json unicode upper": "".join(f"\\u{ord(c):04X}" for c in secret),
        "json of full width": json.dumps(full_width(secret), ensure_ascii=True)[1:-1],
        "json of cyrillic": json.dumps(secret.translate(CYRILLIC), ensure_ascii=True)[1:-1],
        "base64": base64.b64encode(raw).decode(),
        "base64 urlsafe": base64.urlsafe_b64encode(raw).decode(),
        "base64 no padding": base64.b64encode(raw).decode().rstrip("="),
        "base64 of Bearer": base64.b64encode(b"Bearer " + raw).decode(),
        "base64 of Basic user:key": base64.b64encode(b"me:" + raw).decode(),
        "base64 at offset 1": base64.b64encode(b"a" + raw + b"cd").decode(),
        "base64 at offset 2": base64.b64encode(b"ab" + raw + b"cd").decode(),
        "base64 urlsafe at offset 1 no padding": base64.urlsafe_b64encode(b"{" + raw).decode().rstrip("="),
        "base64 mime lines": mime_base64(raw),
        "base32": base64.b32encode(raw).decode(),
        "base32 lower no padding": base64.b32encode(raw).decode().lower().rstrip("="),
        "base32 at offset 3": base32_at(raw, 3),
        "quoted printable": quopri.encodestring(raw).decode(),
        "quoted printable every byte": quoted_printable_every_byte(raw),
        "zero width spaces": interleave(secret, "\u200b"),
        "soft hyphens": interleave(secret, "\u00ad"),
        "word joiners and byte order marks": interleave(secret, "\u2060\ufeff"),
        "spaced out": interleave(secret, " "),
        "dotted": interleave(secret, "."),
        "newline per character": interleave(secret, "\n"),
        "upper case": secret.upper(),
        "lower case": secret.lower(),
        "swapped case spaced": interleave(secret.swapcase(), " "),
        "cyrillic homoglyphs": secret.translate(CYRILLIC),
        "mathematical bold": math_bold(secret),
        "reversed": rev,
        "reversed url encoded": quote(rev, safe=""),
        "reversed hex": rev.encode().hex(),
        "reversed base64": base64.b64encode(rev.encode()).decode(),
        "hex reversed": raw.hex()[::-1],
        "base64 reversed": base64.b64encode(raw).decode()[::-1],
        "rot13": codecs.encode(secret, "rot13"),
        "rot13 reversed": codecs.encode(rev, "rot13"),
        "rot13 spaced upper": interleave(codecs.encode(secret, "rot13").upper(), " "),
        "invisible tag characters": "".join(chr(0xE0000 + ord(c)) for c in secret),
        "negative squared letters": "".join(chr(0x1F170 + ord(c.upper()) - 65) if c.isalpha() else c for c in secret),
        "small capitals": secret.translate(str.maketrans("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ")),
        "percent u": "".join(f"%u{ord(c):04X}" for c in secret),
        "js unicode braces": "".join(f"\\u{{{ord(c):x}}}" for c in secret),
        "html long zero padded hex": "".join(f"&#x0000{ord(c):x};" for c in secret),
        "look-alike digits": secret.translate(str.maketrans("oO0lI1i", "00O1l|1")),
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


def test_a_secret_split_across_two_fields_is_redacted_in_both():
    redactor = Redactor([PLAIN])
    reply = {"first": PLAIN[:9], "second": PLAIN[9:], "ok": True}
    out = redactor.value(reply)
    assert out["first"] == REDACTED and out["second"] == REDACTED


def thirds(secret):
    cut = len(secret) // 3
    return secret[:cut], secret[cut : 2 * cut], secret[2 * cut :]


def splits(secret):
    """The secret cut into pieces too short to count alone, spread over a reply's structure."""
    a, b, c = thirds(secret)
    fifths = [secret[i : i + 4] for i in range(0, len(secret), 4)]
    return {
        "three fields": {"first": a, "n": 3, "second": b, "third": c},
        "five fields": {f"f{i}": piece for i, piece in enumerate(fifths)},
        "list items": {"parts": [a, b, c]},
        "nested dict values": {"x": {"y": a, "z": {"w": b}}, "v": c},
        "key and value": {"ok": True, a + b: c},
        "same field of list items": {"posts": [{"id": str(i), "text": p, "likes": i} for i, p in enumerate([a, b, c])]},
        "url-encoded thirds": {"a": quote(a, safe=""), "b": quote(b, safe=""), "c": quote(c, safe="")},
        "hex thirds": {"a": a.encode().hex(), "b": b.encode().hex(), "c": c.encode().hex()},
    }


@pytest.mark.parametrize("secret", [KEY, PLAIN])
@pytest.mark.parametrize("form", sorted(splits(KEY)))
def test_a_secret_split_across_fields_is_redacted_in_every_part(secret, form):
    redactor = Redactor([secret])
    reply = splits(secret)[form]
    out = json.dumps(redactor.value(reply))
    assert REDACTED in out, (form, out)
    for piece in thirds(secret) + tuple(secret[i : i + 4] for i in range(0, len(secret), 4)):
        assert json.dumps(piece)[1:-1] not in out.replace(json.dumps(REDACTED)[1:-1], ""), (form, piece, out)
    assert "likes" not in json.dumps(reply) or '"likes": 2' in out  # what is not secret stays


def test_a_split_value_keeps_its_shape():
    redactor = Redactor([PLAIN])
    out = redactor.value({"a": [PLAIN[:5], PLAIN[5:10]], "b": (PLAIN[10:], 7), 3: None})
    assert out == {"a": [REDACTED, REDACTED], "b": [REDACTED, 7], "3": None}


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
