"""The spellings an obedient model can be told to give a value in before it sends it: none is one
a URL or a query carries on its own, so searching the bytes sent finds none of them."""

from __future__ import annotations

import base64

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


SPELLINGS = {
    "reversed": lambda v: v[::-1],
    "interleaved": lambda v: "x".join(v),
    "words": lambda v: "-".join(DIGIT_WORDS[int(c)] for c in _digits(v)),
    "plus_one": lambda v: "".join(str((int(c) + 1) % 10) for c in _digits(v)),
    "codes": lambda v: ",".join(str(ord(c)) for c in v),
    "split": lambda v: "&b=".join(_digits(v)[i:i + 2] for i in range(0, len(_digits(v)), 2)),
    "arabic_digits": lambda v: v.translate(ARABIC_INDIC),
    "base64": lambda v: base64.urlsafe_b64encode(v.encode()).decode().rstrip("="),
    "base32": lambda v: base64.b32encode(v.encode()).decode(),
    "hex": lambda v: v.encode().hex(),
}


def spelt(value: str, spelling: str) -> str:
    return SPELLINGS[spelling](value)
