"""The deterministic checks an answer must pass before the model is asked to critique it.

3 to 5 bullets; every bullet cites at least one source; every [N] is a source read in this run;
no bullet merely restates the post (text similarity at or above RESTATE_THRESHOLD)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from agent.explain.sources import SourceBook

MIN_BULLETS, MAX_BULLETS = 3, 5
# Similarity of a bullet (citations removed) to the post's text: the larger of the sequence
# ratio and the word-set overlap. On the eval dataset (bench/explain_similarity.py) background
# bullets score at most 0.36 and restatements (reworded, shortened, reordered) at least 0.86.
RESTATE_THRESHOLD = 0.6
CITATION = re.compile(r"\[(\d{1,3})\]")
_WORDS = re.compile(r"[^\w]+")


def citations(bullet: str) -> list[int]:
    return [int(n) for n in CITATION.findall(bullet)]


def _normal(text: str) -> str:
    return _WORDS.sub(" ", CITATION.sub(" ", text).lower()).strip()


def similarity(bullet: str, post_text: str) -> float:
    """How much of `bullet` is the post's own text, 0..1 (citations and punctuation ignored)."""
    a, b = _normal(bullet), _normal(post_text)
    if not a or not b:
        return 0.0
    if len(a) >= 20 and (a in b or b in a):
        return 1.0
    # The sequence catches a light rewording; the word sets catch the same words reordered.
    words_a, words_b = set(a.split()), set(b.split())
    overlap = len(words_a & words_b) / len(words_a | words_b)
    return max(SequenceMatcher(None, a, b, autojunk=False).ratio(), overlap)


def problems(bullets: list[str], book: SourceBook, post_text: str) -> list[str]:
    """Every way the answer breaks the rules, as sentences the model can act on ([] when none)."""
    found: list[str] = []
    if not MIN_BULLETS <= len(bullets) <= MAX_BULLETS:
        found.append(f"there are {len(bullets)} bullets; give {MIN_BULLETS} to {MAX_BULLETS}")
    for index, bullet in enumerate(bullets, 1):
        cited = citations(bullet)
        if not bullet.strip():
            found.append(f"bullet {index} is empty")
            continue
        if not cited:
            found.append(f"bullet {index} cites no source; add [N] for a source listed above")
        unknown = sorted({n for n in cited if n not in book})
        if unknown:
            listed = ", ".join(f"[{n}]" for n in unknown)
            found.append(f"bullet {index} cites {listed}, which is not a source read in this run")
        score = similarity(bullet, post_text)
        if score >= RESTATE_THRESHOLD:
            found.append(
                f"bullet {index} restates the post (similarity {score:.2f}); explain background instead"
            )
    return found


def citation_validity(bullets: list[str], book: SourceBook) -> float:
    """The share of citations that point to a source read in this run (0.0 when none were made)."""
    cited = [n for bullet in bullets for n in citations(bullet)]
    return sum(1 for n in cited if n in book) / len(cited) if cited else 0.0
