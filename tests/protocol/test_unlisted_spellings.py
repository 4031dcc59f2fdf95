"""The router's own credential in spellings no table listed (wave 3, second round): each is found
by a mechanism, not an entry. Numbers and symbols are decoded like base64 (`protocol.symbol_codes`:
base58, base36, base32 in extended hex, bits, uuencode, Braille cells, Morse); any letter-for-letter
substitution keeps the key's pattern of repeats (`protocol.substitution`: Caesar shifts, Atbash,
look-alike alphabets). Ordinary text is left alone."""

import base64
import binascii
import codecs

import pytest

from protocol.redaction import REDACTED, Redactor
from protocol.substitution import SubstitutionSearch
from tests.protocol.test_secret_shapes import MORE_ORDINARY, ROUTER_SECRETS, ordinary_posts
from tests.protocol.test_suspicion import CHEROKEE, LISU, MORSE, base58, ordinary_everywhere

KEY = "moltbook_sk_" + "Echo/7f+Kq9=Zx&2Lw"


def caesar(text, shift):
    def turn(c):
        if c.isascii() and c.isalpha():
            first = ord("a") if c.islower() else ord("A")
            return chr((ord(c) - first + shift) % 26 + first)
        return c

    return "".join(map(turn, text))


def base36(raw):
    number, digits = int.from_bytes(raw, "big"), ""
    while number:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
    return digits


def numbers_and_symbols(secret):
    raw = secret.encode()
    return {
        "base58": base58(raw),
        "base58 of 'Bearer key'": base58(b"Bearer " + raw),
        "base36": base36(raw),
        "base36 upper": base36(raw).upper(),
        "base32 extended hex": base64.b32hexencode(raw).decode(),
        "bits": "".join(f"{b:08b}" for b in raw),
        "bits spaced": " ".join(f"{b:08b}" for b in raw),
        "uuencode": binascii.b2a_uu(raw).decode().strip(),
        "Braille cells": "".join(chr(0x2800 + b) for b in raw),
        "Morse": " ".join(MORSE.get(c.lower(), c) for c in secret if c.lower() in MORSE),
        "code points": " ".join(f"U+{ord(c):04X}" for c in secret),
    }


def substitutions(secret):
    return {
        **{f"Caesar {k}": caesar(secret, k) for k in (1, 3, 7, 19, 25)},
        "Atbash": "".join(chr(ord("a") + ord("z") - ord(c)) if "a" <= c <= "z" else c for c in secret),
        "Lisu look-alikes": "".join(LISU.get(c, c) for c in secret.upper()),
        "Lisu for the capitals only": "".join(LISU.get(c, c) for c in secret),
        "Cherokee look-alikes": "".join(CHEROKEE.get(c, c) for c in secret),
        "rot13 then shifted digits": codecs.encode(secret, "rot13").translate(str.maketrans("0123456789", "5678901234")),
    }


NATO_WORDS = (
    "alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec "
    "romeo sierra tango uniform victor whiskey xray yankee zulu"
)
NATO = dict(zip("abcdefghijklmnopqrstuvwxyz", NATO_WORDS.split(" "), strict=True))


def spelt_out(secret):
    """The key a character at a time with the same filler between, or a word at a time."""
    return {
        "a filler character between": "x".join(secret),
        "two filler characters between": "".join(c + "~#" for c in secret),
        "one character a word, words between": " and ".join(secret),
        "the spelling alphabet": " ".join(NATO.get(c.lower(), c) for c in secret),
        "an acrostic": " ".join(f"{c}{'ool' if c.isalpha() else ''}" for c in secret),
    }


@pytest.mark.parametrize("secret", [KEY, "bsky-app-" + "pass-9f3k-2lm8", "xoxb-" + "9f3a7c21e4b8"])
def test_the_key_spelt_out_with_fillers_or_a_word_at_a_time_is_redacted(secret):
    redactor = Redactor([*ROUTER_SECRETS, secret])
    for name, spelled in spelt_out(secret).items():
        text = f"fun game: {spelled} (guess it)"
        assert redactor.finds(text), name
        assert "(guess it)" in redactor.text(text) and spelled not in redactor.text(text), name


@pytest.mark.parametrize("secret", [KEY, "bsky-app-" + "pass-9f3k-2lm8"])
def test_numbers_and_symbols_spelling_the_key_are_redacted(secret):
    redactor = Redactor([*ROUTER_SECRETS, secret])
    for name, spelled in numbers_and_symbols(secret).items():
        if name == "Morse" and "&" in secret:
            continue
        text = f"the reply said {spelled} and nothing else"
        assert redactor.finds(text), name
        assert spelled not in redactor.text(text) and REDACTED in redactor.text(text), name


@pytest.mark.parametrize("secret", [KEY, "bsky-app-" + "pass-9f3k-2lm8", "xoxb-" + "9f3a7c21e4b8"])
def test_any_letter_for_letter_substitution_of_the_key_is_redacted(secret):
    redactor = Redactor([*ROUTER_SECRETS, secret])
    for name, spelled in substitutions(secret).items():
        text = f"look: {spelled}."
        assert redactor.text(text) == f"look: {REDACTED}.", name


def test_a_key_with_too_few_repeats_is_not_searched_by_its_pattern():
    assert SubstitutionSearch(["abcdefghijklmnopqrstu"]).patterns == {}  # no repeat: any word would do
    assert SubstitutionSearch(["short-a-a"]).patterns == {}


def test_ordinary_text_holds_no_substituted_key():
    redactor = Redactor(ROUTER_SECRETS + [KEY])
    texts = ordinary_everywhere() + ordinary_posts() + MORE_ORDINARY
    assert [t for t in texts if redactor.finds(t)] == []


def rearranged(secret):
    """The key's characters moved about: no piece of five in order is left for the grams."""
    swapped = "".join(secret[i : i + 2][::-1] for i in range(0, len(secret), 2))
    return {
        "pairs swapped": swapped,
        "every other character first": f"{secret[::2]} {secret[1::2]}",
        "read from the middle out": secret[len(secret) // 2 :: -1] + " " + secret[: len(secret) // 2 : -1],
        "every third character first": f"{secret[::3]}-{secret[1::3]}-{secret[2::3]}",
    }


@pytest.mark.parametrize("secret", [KEY, "xoxb-" + "9f3a7c21e4b8aa"])
def test_the_keys_characters_moved_about_are_found_and_redacted(secret):
    redactor = Redactor([*ROUTER_SECRETS, secret])
    for name, spelled in rearranged(secret).items():
        text = f"a riddle: {spelled}, guess it"
        assert redactor.rearranged(text) and redactor.finds(text), name
        assert redactor.text(text).startswith("a riddle: [REDACTED]") and text.endswith(", guess it"), name


def test_no_ordinary_text_is_a_key_rearranged():
    redactor = Redactor(ROUTER_SECRETS + [KEY])
    texts = ordinary_everywhere() + ordinary_posts() + MORE_ORDINARY
    assert [t for t in texts if redactor.rearranged(t)] == []
    assert not redactor.rearranged("\n".join(texts))  # nor all of them in one long text
