"""Characters nobody sees: Unicode's default-ignorable code points (zero-width spaces and joiners,
word joiners, soft hyphens, variation selectors, tag characters, fillers), which a renderer
draws as nothing. A text can carry a whole message in them ("ASCII smuggling" in tag characters,
bytes in variation selectors), so the owner could approve "Nice post!" and publish far more.

`hidden_in(text)` finds the ones a text holds beyond their ordinary use (a joiner inside an emoji
sequence or between letters of a script that needs it, an emoji's presentation selector, a flag's
tag sequence, a direction mark in right-to-left text: a joiner between Latin or Cyrillic letters
is none of these); `shown(text)` writes each as its escape
(`\\u200b`) so a screen shows the owner what would go out.
"""

from __future__ import annotations

import unicodedata

# Default_Ignorable_Code_Point, from Unicode's DerivedCoreProperties.txt.
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
ZWNJ, ZWJ = "\u200c", "\u200d"
PRESENTATION = frozenset("\ufe0e\ufe0f")  # text or emoji style of the character before
DIRECTION_MARKS = frozenset("\u200e\u200f\u061c")
BLACK_FLAG = "\U0001f3f4"
TAGS = (0xE0020, 0xE007F)  # a subdivision flag: BLACK FLAG, tag letters, CANCEL TAG (E007F)
MAX_FLAG_TAGS = 8  # "gbsct" and its cancel tag: the longest a real flag takes


def is_ignorable(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _IGNORABLE_RANGES)


# Scripts whose spelling needs a joiner between letters: Arabic and Syriac, the Indic scripts.
_JOINING_LETTERS = ((0x0600, 0x08FF), (0x0900, 0x0DFF), (0x0F00, 0x109F), (0x1780, 0x17FF), (0xFB50, 0xFDFF))


def _joined(char: str) -> bool:
    """What a zero-width joiner or non-joiner stands between in ordinary text: an emoji, or a
    letter (or mark) of a script that needs one."""
    if not char or char.isascii() or is_ignorable(char):
        return False
    if unicodedata.category(char) in ("So", "Sk"):  # an emoji, or its skin tone
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _JOINING_LETTERS)


def _right_to_left(text: str) -> bool:
    return any(unicodedata.bidirectional(c) in ("R", "AL") for c in text if not c.isascii())


def hidden_in(text: str) -> list[int]:
    """Where `text` holds an invisible character beyond its ordinary use (module doc)."""
    if text.isascii():
        return []
    found: list[int] = []
    rtl: bool | None = None
    flag_tags = -1  # tags since a black flag (-1: not in a flag sequence)
    for i, char in enumerate(text):
        if not is_ignorable(char):
            flag_tags = 0 if char == BLACK_FLAG else -1
            continue
        before = text[i - 1] if i else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        if char in PRESENTATION and before and not is_ignorable(before):
            continue
        if char in (ZWJ, ZWNJ) and _joined(before) and _joined(after):
            continue
        if char == ZWJ and before in PRESENTATION and _joined(after):
            continue  # 🏳️‍🌈: a presentation selector, then the joiner
        if 0 <= flag_tags < MAX_FLAG_TAGS and TAGS[0] <= ord(char) <= TAGS[1]:
            flag_tags = -1 if ord(char) == TAGS[1] else flag_tags + 1
            continue
        if char in DIRECTION_MARKS:
            rtl = _right_to_left(text) if rtl is None else rtl
            if rtl:
                continue
        found.append(i)
    return found


def shown(text: str) -> str:
    """`text` with every invisible character it holds beyond ordinary use written as its escape."""
    places = set(hidden_in(text))
    if not places:
        return text
    return "".join(f"\\u{ord(c):04x}" if i in places and ord(c) <= 0xFFFF else
                   f"\\U{ord(c):08x}" if i in places else c for i, c in enumerate(text))
