"""A learned detector of text written to steer a model (prompt injection), for the flags.

A logistic regression over character 3-5-grams and word uni- and bigrams of the folded text,
trained offline on public data (scripts/train_injection_detector.py) and shipped as
protocol/injection_model.json.gz: loaded from that file, never downloaded. A text is read in
overlapping windows, so an instruction buried in a long page counts as much as a short post,
and through a few views a reader of the text could undo (escapes, base64 or hex runs, ROT13,
letters spaced out); its score is the highest of any window of any view.

The flag is a signal for the model and the logs, never the guard: the router's policy and the
taint rule decide what may happen, whatever this says.
"""

from __future__ import annotations

import codecs
import functools
import gzip
import itertools
import json
import math
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from protocol.blobs import blobs
from protocol.spellings import MAY_BE_ESCAPED, decode, fold_char

MODEL_FILE = Path(__file__).with_name("injection_model.json.gz")
MAX_SCAN_CHARS = 8_000  # a longer text is read at its start and its end: the cost stays bounded
NGRAMS = (3, 4, 5)
WINDOW, STEP = 400, 200
PRIOR_FEATURES = 60  # about a 20-character text's worth
MIN_WORDS = 3
_WORDS = re.compile(r"\w+|[^\w\s]")
_SPACES = re.compile(r"\s+")
# Five or more single letters in a row, each followed by the same kind of separator: "i g n o r e".
_SPACED = re.compile(r"(?<!\w)(?:\w[ ._*\-]){5,}\w(?!\w)")
_WORD_KEY, _BIGRAM_KEY = "\x01", "\x02"  # prefixes no character n-gram can start with (folded text)
_BIGRAM_FORMAT = (_BIGRAM_KEY + "{} {}").format
_VIEW_LIMIT = 2 * MAX_SCAN_CHARS  # folding may lengthen a text (a ligature is several letters)
# What a base64, hex, base85 or character-code run needs before `blobs` is worth asking.
_MAY_HOLD_BLOB = re.compile(r"[A-Za-z0-9+/=_-]{16,}|[!-u]{20,}|\d{2,3}[ ,;]+\d{2,3}[ ,;]+\d{2,3}")
# A word with digits or signs standing for letters between its letters: "r3v34l", "y0ur", "p4$$w0rd".
_LEET_WORD = re.compile(r"\b[\w@$]*[a-z][0134578@$]+[a-z][\w@$]*")
_LEET_INSIDE = re.compile(r"[a-z][0134578@$]+[a-z]")  # the cheap test first
_LEET = str.maketrans("0134578@$", "oieastbas")
_BINARY = re.compile(r"(?:[01]{8}\s+){5,}[01]{8}")  # bytes written as bits
# Words frequent in ordinary English: a text without them may be ROT13, a text with them is not.
_COMMON = frozenset(
    [
        "the",
        "and",
        "to",
        "a",
        "of",
        "you",
        "is",
        "i",
        "in",
        "it",
        "for",
        "that",
        "on",
        "my",
        "this",
        "with",
        "be",
        "are",
        "not",
        "your",
        "have",
    ]
)


@dataclass(frozen=True)
class Model:
    weights: dict[str, float]
    bias: float
    threshold: float

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> Model:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("ngrams") != list(NGRAMS) or data.get("window") != [WINDOW, STEP, PRIOR_FEATURES]:
            raise ValueError(f"{path.name} was trained with other features; retrain it")
        return cls(
            {str(k): float(v) for k, v in data["weights"].items()},
            float(data["bias"]),
            float(data["threshold"]),
        )


@functools.cache
def model() -> Model:
    return Model.load()


def normalise(text: str) -> str:
    """Folded for reading: escapes undone, look-alike and full-width letters as ASCII, invisible
    characters dropped, lower case, white space as single spaces."""
    if MAY_BE_ESCAPED.search(text):
        folded = decode(text)
    else:
        folded = text if text.isascii() else text.translate(_FOLD_TABLE)
    return _SPACES.sub(" ", folded.casefold()).strip()


class _FoldTable(dict[int, str]):
    """`protocol.spellings.fold` as a translation table, filled as characters are met, so a text
    in another script is folded in one C loop instead of a call per character."""

    def __missing__(self, code: int) -> str:
        folded = chr(code) if code < 128 else fold_char(chr(code))
        if len(self) < 65_536:  # the table stays bounded whatever text comes
            self[code] = folded
        return folded


_FOLD_TABLE = _FoldTable()


def views(text: str) -> list[str]:
    """The normalised text, and what a reader could turn it into: each base64/hex/bits... run
    decoded; digits that stand for letters read as letters; spaced-out letters joined; a text
    with almost none of the commonest English words also in ROT13 and backwards."""
    if len(text) > MAX_SCAN_CHARS:
        half = MAX_SCAN_CHARS // 2
        text = text[:half] + "\n" + text[-half:]
    main = normalise(text)
    out = [main]
    if _MAY_HOLD_BLOB.search(text):
        for blob in blobs(text, depth=2)[:8]:
            out += [normalise(t) for t in blob.texts[:2] if t.strip()]
    for run in _BINARY.findall(text)[:8] if text.count("0") + text.count("1") >= 48 else ():
        out.append(normalise("".join(chr(int(byte, 2)) for byte in run.split())))
    words = main.split()
    # ROT13 and reversal are for Latin text, which ASCII mostly is
    mostly_ascii = len(main.encode("utf-8", "surrogatepass")) <= 1.1 * len(main)
    if mostly_ascii and len(words) >= 3 and sum(w in _COMMON for w in words) < 0.08 * len(words):
        out += [codecs.encode(main, "rot13"), main[::-1]]
    if len(_LEET_INSIDE.findall(main, 0, 4096)) >= 2:
        out.append(_LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), main))
    if _SPACED.search(main):
        out.append(_SPACED.sub(lambda m: m.group(0)[::2], main))
    return [v for v in dict.fromkeys(v[:_VIEW_LIMIT] for v in out) if _worded(v)]


def _worded(view: str) -> bool:
    """Whether a view has the MIN_WORDS words an instruction needs: a handle, a URL, an id, a
    date or a two-word reply is not scored (a blob in it is, through its decoded view)."""
    found = 0
    for token in view.split(" ", 64):
        if sum(c.isalpha() for c in token[:64]) >= 2:
            found += 1
            if found >= MIN_WORDS:
                return True
    return False


def windows(length: int) -> list[tuple[int, int]]:
    """The [start, end) spans a text of `length` characters is read in."""
    if length <= WINDOW:
        return [(0, length)]
    starts = list(range(0, length - WINDOW + 1, STEP))
    if starts[-1] != length - WINDOW:
        starts.append(length - WINDOW)
    return [(s, s + WINDOW) for s in starts]


@functools.cache
def _slices(n: int) -> list[slice]:
    """The n-character slices of a view, made once (cutting by a ready slice keeps the loop in C)."""
    return [slice(i, i + n) for i in range(_VIEW_LIMIT + 2)]


def scale(count: int) -> float:
    """What each feature of a window of `count` features is multiplied by: one over the square
    root of the count, as if every window had at least PRIOR_FEATURES, so two words ("the owner")
    cannot weigh like a paragraph."""
    return 1.0 / math.sqrt(count + PRIOR_FEATURES)


def window_features(view: str, start: int, end: int) -> list[str]:
    """Every feature of one window (with repeats): the reference the fast scorer matches and the
    trainer counts."""
    padded = " " + view + " "
    stop = end + 2 if end == len(view) else end + 1
    grams = [padded[i : i + n] for n in NGRAMS for i in range(start, stop - n + 1)]
    words = [(m.start(), m.group()) for m in _WORDS.finditer(view)]
    inside = [w for at, w in words if start <= at < end]
    first = next((i for i, (at, _) in enumerate(words) if at >= start), len(words))
    pairs = [
        f"{_BIGRAM_KEY}{a[1]} {b[1]}"
        for a, b in itertools.pairwise(words[first:])
        if a[0] < end and b[0] < end
    ]
    return grams + [_WORD_KEY + w for w in inside] + pairs


def _view_score(view: str, weights: dict[str, float], bias: float) -> float:
    """The highest window score of one view, from prefix sums (each feature is weighed once)."""
    get = weights.get
    padded = " " + view + " "
    cut = padded.__getitem__
    zero = itertools.repeat(0.0)
    if len(view) <= WINDOW:  # one window (most posts): plain sums, no prefix arrays
        tokens = _WORDS.findall(view)
        sizes = [max(0, len(padded) - n + 1) for n in NGRAMS]
        total = sum(sum(map(get, map(cut, itertools.islice(_slices(n), size)), zero))
                    for n, size in zip(NGRAMS, sizes, strict=True))
        total += sum(map(get, map(_WORD_KEY.__add__, tokens), zero))
        total += sum(map(get, map(_BIGRAM_FORMAT, tokens, tokens[1:]), zero))
        return bias + total * scale(sum(sizes) + len(tokens) + max(0, len(tokens) - 1))
    gram_sums = {  # C-level loops: this is where the time goes
        n: [
            0.0,
            *itertools.accumulate(
                map(get, map(cut, itertools.islice(_slices(n), max(0, len(padded) - n + 1))), zero)
            ),
        ]
        for n in NGRAMS
    }
    tokens = _WORDS.findall(view)
    starts = [m.start() for m in _WORDS.finditer(view)]
    unigram = [0.0, *itertools.accumulate(map(get, map(_WORD_KEY.__add__, tokens), zero))]
    bigram = [0.0, *itertools.accumulate(map(get, map(_BIGRAM_FORMAT, tokens, tokens[1:]), zero))]
    best = -math.inf
    for start, end in windows(len(view)):
        stop = end + 2 if end == len(view) else end + 1
        total, count = 0.0, 0
        for n in NGRAMS:
            last = max(start, stop - n + 1)
            total += gram_sums[n][last] - gram_sums[n][start]
            count += last - start
        first, after = bisect_left(starts, start), bisect_left(starts, end)
        total += unigram[after] - unigram[first]
        pair_first = min(first, len(bigram) - 1)
        pair_end = max(pair_first, min(after - 1, len(bigram) - 1))
        total += bigram[pair_end] - bigram[pair_first]
        count += (after - first) + (pair_end - pair_first)
        best = max(best, bias + total * scale(count))
    return best


def score(text: str, detector: Model | None = None) -> float:
    """How much `text` reads as written to steer a model, from 0 to 1 (the highest of any window
    of any of its views)."""
    detector = detector or model()
    margin = max(
        (_view_score(v, detector.weights, detector.bias) for v in views(str(text))), default=-math.inf
    )
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, margin))))


def looks_injected(text: str, detector: Model | None = None) -> bool:
    detector = detector or model()
    return score(text, detector) >= detector.threshold
