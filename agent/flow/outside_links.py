"""Links and handles in the explainer's answer that come from outside, marked so none is clickable.

Every token a reader would take as a host, a URL or a handle (`protocol.link_hosts`: bare
domains, `@handles`, `example[.]com`, `example dot com`, `hxxp://`, look-alike dots and
letters) is kept as written only when the owner wrote it or it is the explained post's author's
own handle. Any other is replaced by `[outside: host[.]name]`: the host as a reader would be
sent to it (IDNA, so a look-alike shows as `xn--…`), with every dot bracketed and `@` written
`(at)`, so neither Telegram nor a terminal makes a link or a mention of it.

Fail closed: a bullet that still names an outside host once its tokens are marked (a spelling
the tokens did not split) is withheld whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol.link_hosts import dot_like, link_keys, same_place

WITHHELD_BULLET = "(withheld: this bullet names a link or handle from outside that could not be marked)"
WITHHELD_LINE = "(withheld: this line names a link or handle from outside that could not be marked)"
_TOKEN = re.compile(r"\S+")
# A token that joins two labels into a host when spaced apart: `dot`, `.`, `[.]`, `(dot)`...
_JOINER = re.compile(r"(?:dot|\.|[\[({<](?:\.|dot)[\])}>])", re.IGNORECASE)
_MAX_JOINED = 4  # labels joined across spaces: `a dot b dot c dot d`


@dataclass
class OutsideLinks:
    """What the owner may be shown as written: hosts and handles of the owner's words and the
    post author's handle."""

    kept: set[str] = field(default_factory=set)

    @classmethod
    def for_explain(cls, owner_words: Iterable[str], post_author: str) -> OutsideLinks:
        kept = {key for words in owner_words for key in link_keys(words)}
        author = post_author.strip().lstrip("@")
        if author:
            kept |= set(link_keys("@" + author)) | set(link_keys(author))
        return cls(kept)

    def foreign(self, text: str) -> list[str]:
        return [key for key in link_keys(text) if not any(same_place(key, k) for k in self.kept)]

    def mark(self, text: str, withheld: str = WITHHELD_BULLET) -> tuple[str, list[str]]:
        """`text` with each outside host or handle replaced by its marked form, and those keys;
        `withheld` instead when a host is left that the tokens did not split (fail closed)."""
        spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        out: list[str] = []
        marked: list[str] = []
        last = 0
        index = 0
        while index < len(spans):
            end_index = self._joined_end(text, spans, index)
            start, end = spans[index][0], spans[end_index][1]
            foreign = self.foreign(text[start:end])
            if foreign:
                out.append(text[last:start])
                token = text[start:end]
                out.append(_leading(token) + " ".join(shown(key) for key in foreign) + _trailing(token))
                marked += foreign
                last = end
            index = end_index + 1
        out.append(text[last:])
        result = "".join(out)
        leftover = self.foreign(_without_marks(result))
        if leftover:
            return withheld, list(dict.fromkeys(marked + leftover))
        return result, list(dict.fromkeys(marked))

    @staticmethod
    def _joined_end(text: str, spans: list[tuple[int, int]], index: int) -> int:
        """The last token of `label joiner label …` starting at `index` (itself when none)."""
        end = index
        for _ in range(_MAX_JOINED - 1):
            if end + 2 >= len(spans):
                break
            joiner = text[spans[end + 1][0]:spans[end + 1][1]]
            if not (_JOINER.fullmatch(joiner) or (len(joiner) == 1 and joiner in dot_like())):
                break
            end += 2
        return end


def shown(key: str) -> str:
    """A host or handle as text no renderer links: dots bracketed, `@` spelt out."""
    return "[outside: " + key.replace("@", "(at)").replace(".", "[.]") + "]"


_MARK = re.compile(r"\[outside: (?:[^\[\]\s]|\[\.\])*\]")
_PUNCTUATION = ".,;:!?"


def _without_marks(text: str) -> str:
    return _MARK.sub(" ", text)


def _leading(token: str) -> str:
    return token[: len(token) - len(token.lstrip("(\"'«“‘"))]


def _trailing(token: str) -> str:
    """The sentence punctuation a token ended with (kept after its marked form)."""
    stripped = token.rstrip(_PUNCTUATION + ")")
    return token[len(stripped):]


def mark_all(texts: Iterable[str], links: OutsideLinks) -> tuple[list[str], list[str]]:
    marked_texts, keys = [], []
    for text in texts:
        marked, found = links.mark(text)
        marked_texts.append(marked)
        keys += found
    return marked_texts, list(dict.fromkeys(keys))
