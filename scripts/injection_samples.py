"""One text of the injection corpus (`scripts.injection_corpus`): what it is, where it came from and
which split it belongs to; and where pip installed a public package the corpus reads."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    text: str
    injection: bool
    kind: str  # one of KINDS, "ordinary_posts", or the source's own name for ordinary text
    source: str
    split: str  # train, tune, test, or outside


def package_dir(name: str) -> Path | None:
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file("")))
