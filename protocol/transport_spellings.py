"""How a secret looks once a real client or server has carried it: the spellings the redactor
searches for (`protocol.redaction`).

A platform, an HTTP library or a log writes a value it was given in the encodings of its
transport, never in a code it chose to hide it: verbatim; URL-encoded by any common encoder
(Python's `quote` and `quote_plus`, JavaScript's `encodeURIComponent` and `encodeURI`, either hex
case, `+` for a space); as a JSON string (`\\uXXXX` escapes, `\\/`, the HTML-safe escapes of Go and
others); HTML-escaped (named and numeric entities); in base64 or base64url, at each of the three
byte alignments a secret can sit at inside a longer encoded value (a Basic auth header, a cookie);
and in hex. Case and line breaks are the redactor's to undo (it searches case-blind, with the
line breaks taken out), so they are not spelt out here.
"""

from __future__ import annotations

import base64
import html
import json
from urllib.parse import quote, quote_plus

# The characters each common URL encoder leaves as they are (besides letters, digits and `_.-~`).
_URL_SAFE = ("", "/", "!*'()", ";,/?:@&=+$!*'()#")
_JSON_HTML_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "'": "\\u0027"}
_QUOTE_ENTITIES = {"'": ("&#x27;", "&#39;", "&apos;"), '"': ("&quot;", "&#34;", "&#x22;")}
MIN_ENCODED = 8  # a base64 core shorter than this is too common a run to redact


def url_spellings(secret: str) -> set[str]:
    """Each common encoder's form, every byte escaped, and the whole escaped again (a link that
    carries the key, itself in a query)."""
    forms = {encode(secret, safe=safe) for safe in _URL_SAFE for encode in (quote, quote_plus)}
    forms |= {"".join(f"%{b:02x}" for b in secret.encode("utf-8")), quote(quote(secret, safe=""), safe="")}
    return forms


def json_spellings(secret: str) -> set[str]:
    forms = {json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    forms |= {form.replace("/", "\\/") for form in forms}
    forms.add("".join(_JSON_HTML_SAFE.get(c, c) for c in json.dumps(secret)[1:-1]))
    forms.add(_every_unit(secret))
    return forms


def _every_unit(secret: str) -> str:
    """Every character as a `\\uXXXX` escape (astral ones as their surrogate pair)."""
    units = secret.encode("utf-16-be")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def html_spellings(secret: str) -> set[str]:
    body = html.escape(secret, quote=False)
    forms = {body, html.escape(secret, quote=True)}
    for char, entities in _QUOTE_ENTITIES.items():
        forms |= {form.replace(char, entity) for form in list(forms) for entity in entities}
    forms |= {"".join(f"&#{ord(c)};" for c in secret), "".join(f"&#x{ord(c):x};" for c in secret)}
    return forms


def base64_cores(raw: bytes) -> set[str]:
    """The part of the base64 of `raw` fixed by `raw` alone, at each of the 3 byte offsets it can
    start at, in the standard and the URL-safe alphabets (and URL-encoded, as in a query)."""
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        first = -(-8 * offset // 6)
        last = 8 * (offset + len(raw)) // 6
        core = encoded[first:last]
        if len(core) >= MIN_ENCODED:
            cores |= {core, core.replace("+", "-").replace("/", "_"), quote(core, safe="")}
    return cores


def spellings(secret: str) -> tuple[set[str], set[str]]:
    """(the secret's transport spellings, its base64 cores): the cores are widened to the partial
    groups and padding around them when found."""
    raw = secret.encode("utf-8")
    plain = {secret, raw.hex()} | url_spellings(secret) | json_spellings(secret) | html_spellings(secret)
    return plain, base64_cores(raw)
