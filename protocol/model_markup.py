"""Markup that would steer a model (chat-template and bracket tokens, tool_code tags, the fence
markers of `protocol.untrusted`), found on one folded copy of a text however it is spelled (case,
look-alike letters and brackets, combining marks, invisible characters, spaced-out letters) and
made inert where it stands.
"""

from __future__ import annotations

import re
import unicodedata

from protocol.spellings import fold_char

# Chat-template and role tokens of the common model families. Matched case-insensitively.
TEMPLATE_TOKENS = re.compile(
    r"<\|[a-z_]{2,30}\|>"  # <|im_start|> <|im_end|> <|system|> <|eot_id|> <|start_header_id|> ...
    r"|<\|?(?:begin|end)_of_text\|?>"
    r"|</?s>"  # llama-2 sentence markers
    r"|\[/?(?:INST|SYS)\]|<</?SYS>>"
    r"|<(?:start|end)_of_turn>"
    r"|<\|?(?:system|user|assistant|endoftext)\|?>",
    re.IGNORECASE,
)
# Bracket tokens (Mistral's [TOOL_CALLS], [AVAILABLE_TOOLS], [SYSTEM_PROMPT], [THINK]…), matched
# on the folded (lower-case) text: any [WORD_WORD] and the known single words.
_BRACKET_TOKENS = re.compile(r"\[/?(?:[a-z]+(?:_[a-z]+)+|inst|sys|think|img|tools?)\]")
# A tool_code tag however it is spaced or spelled, matched on the folded text.
_TOOL_CODE_TAG = re.compile(
    r"<[^\S\n]{0,3}/?[^\S\n]{0,3}t[\W_]{0,2}o[\W_]{0,2}o[\W_]{0,2}l[\W_]{0,3}"
    r"c[\W_]{0,2}o[\W_]{0,2}d[\W_]{0,2}e[^\S\n]{0,3}>"
)
# A fence marker however it is spelled: found on a folded copy (NFKC, case, look-alike letters and
# brackets, invisible characters dropped) so "＜＜＜END UNTRUSTED DΑTA＞＞＞" is one as well.
_LOOSE_FENCE_MARKER = re.compile(
    r"(?:<[^\S\n]*){0,3}/?[^\S\n]*(?:end[\W_]{0,3})?untrusted[\W_]{0,3}data"
    r"(?:[^<>\n]{0,60}?>+|(?:[^\S\n]*>){1,3})?"
)
_LOOKALIKE_LETTERS = str.maketrans(
    "αβеєіјкмнорсѕтухаԁԛԝάέήίόύώ" + "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧАВЕЅІЈКМНОРСТХ".lower(),
    "abeeijkmhopcstyxadqwaenioyw" + "abezhikmnoptyxabesijkmhopctx",
)
# Brackets that read as < or >: inside a fence they are shown as &lt; / &gt;, so they cannot close a section.
_OPENING_ANGLES, _CLOSING_ANGLES = "＜﹤‹〈⟨〈❮❬⧼˂ᐸ⋖❰《⟪", "＞﹥›〉⟩〉❯❭⧽˃ᐳ⋗❱》⟫"
# Cherokee letters that read as Latin capitals (NFKC and the confusables table leave them alone).
_CHEROKEE = str.maketrans(
    "\u13a0\u13a1\u13a2\u13a9\u13aa\u13ab\u13ac\u13b3\u13b7\u13bb\u13c0\u13c3\u13c6\u13d2"
    "\u13d4\u13d9\u13da\u13de\u13df\u13e2\u13e6\u13f3\u13f4",
    "drtyajewmhgzirwvslcpkgb",
)
_ANGLE_LIKE = {ch: "&lt;" for ch in _OPENING_ANGLES} | {ch: "&gt;" for ch in _CLOSING_ANGLES}
_ANGLE_LIKE_CHAR = re.compile("[" + re.escape(_OPENING_ANGLES + _CLOSING_ANGLES) + "]")
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
_NOT_ASCII_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_FOLD_ANGLES = str.maketrans(
    {ch: "<" for ch in _OPENING_ANGLES + "«≪"} | {ch: ">" for ch in _CLOSING_ANGLES + "»≫"}
)

# Bidi overrides and isolates, zero-width characters and other invisible format characters
# used to hide instructions from a human reader.
INVISIBLE = {
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u200f",
    "\u2060",
    "\u2061",
    "\u2062",
    "\u2063",
    "\u2064",
    "\ufeff",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u00ad",
    "\u180e",
}


def neutralise(text: str) -> str:
    """Defuse markup that could steer a model: template tokens, tool_code tags and fence markers,
    each found on one folded copy of the text (case, look-alike letters and brackets, combining
    marks, invisible characters) and, for the fence words, on its letters alone (spaced out)."""
    if not text:
        return text
    folded, origin = _folded(text)
    found: list[tuple[int, int, str]] = []
    for pattern, inert in ((TEMPLATE_TOKENS, _token), (_BRACKET_TOKENS, _token), (_TOOL_CODE_TAG, _tag)):
        for match in pattern.finditer(folded):
            if match.end() > match.start():
                found.append((origin[match.start()], origin[match.end() - 1] + 1, inert(match.group(0))))
    return _replace_spans(text, found + _fence_markers(folded, origin))


def _token(marker: str) -> str:
    return "[token:" + marker.strip("<>[]|/ ").lower() + "]"


def _tag(marker: str) -> str:
    return "[/tool_code tag]" if "/" in marker else "[tool_code tag]"


def _spaced_fence_words(folded: str, origin: list[int]) -> list[tuple[int, int]]:
    """`untrusted data` spelled with anything between its letters (U N T R U S T E D . D A T A)."""
    letters = [(ch, i) for i, ch in enumerate(folded) if ch.isascii() and ch.isalnum()]
    skeleton = "".join(ch for ch, _ in letters)
    spans = []
    for match in re.finditer(r"(?:end)?untrusteddata", skeleton):
        first, last = letters[match.start()][1], letters[match.end() - 1][1]
        spans.append((origin[first], origin[last] + 1))
    return spans


def _replace_spans(text: str, found: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    last = 0
    for start, end, inert in sorted(found, key=lambda f: (f[0], -f[1])):
        if start < last:
            continue  # inside a span already replaced
        out += [text[last:start], inert]
        last = end
    return "".join(out) + text[last:] if out else text


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` folded for matching, and for each folded character the index it came from."""
    if text.isascii():  # the common case, and a fast one
        return text.lower(), list(range(len(text)))
    chars: list[str] = []
    origin: list[int] = []
    last = 0
    for run in _ASCII_RUN.finditer(text):  # an ASCII letter folds to its lower case alone
        _fold_each(text, last, run.start(), chars, origin)
        chars.append(run.group().lower())
        origin.extend(range(run.start(), run.end()))
        last = run.end()
    _fold_each(text, last, len(text), chars, origin)
    return "".join(chars), origin


def _fold_each(text: str, start: int, end: int, chars: list[str], origin: list[int]) -> None:
    for index in range(start, end):
        ch = text[index]
        if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in INVISIBLE:
            continue
        for part in unicodedata.normalize("NFKC", ch.translate(_CHEROKEE)).translate(_FOLD_ANGLES).casefold():
            part = part.translate(_LOOKALIKE_LETTERS)
            for folded in (part if part.isascii() else fold_char(part).lower() or part):
                chars.append(folded)
                origin.append(index)


def defuse_fence_markers(text: str) -> str:
    """Every spelling of a fence marker (case, spacing, full-width, look-alike letters) made inert."""
    if not text:
        return text
    return _replace_spans(text, _fence_markers(*_folded(text)))


def _fence_markers(folded: str, origin: list[int]) -> list[tuple[int, int, str]]:
    """The fence markers of a folded text, however spelled or spaced out. Both searches are costly
    at every position of a long text; each match holds a literal, looked for first (in C)."""
    found = []
    if "untrusted" in folded:  # every loose marker spells it out
        found = [(origin[m.start()], origin[m.end() - 1] + 1, "[fence marker]")
                 for m in _LOOSE_FENCE_MARKER.finditer(folded) if m.end() > m.start()]
    if "untrusteddata" in _NOT_ASCII_ALNUM.sub("", folded):  # its letters alone, as the spaced search
        found += [(start, end, "[fence marker]") for start, end in _spaced_fence_words(folded, origin)]
    return found



def inert_angles(text: str) -> str:
    """Brackets that read as < or > (full-width, small, single guillemets, math) as &lt; / &gt;."""
    return _ANGLE_LIKE_CHAR.sub(lambda match: _ANGLE_LIKE[match.group()], text)
