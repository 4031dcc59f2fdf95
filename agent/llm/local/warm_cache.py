"""What the embedded model computes the same way at every start, kept on disk: the llama.cpp state
after the fixed prompt, and each answer's calibration baseline (its log-probabilities after the
content-free messages). Cold, these took 58% of the tokens before the first answer.

Everything is keyed by what it depends on: the model file (path, size, modification time), the
llama.cpp version, the context size and the fixed prompt's text; a baseline also by its answer's
tokens. A file that is missing, cut short or from another key is ignored and written again, so
the cache can be deleted at any time. Writes are atomic (temp file, rename) without fsync: losing
one to a crash only costs the next start its speed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from protocol.atomic_file import write_atomically

log = logging.getLogger("safeclaw.agent.local")
FORMAT = 1


def cache_key(llama: Any, prefix: str) -> str:
    """What the state after `prefix` depends on, hashed."""
    import llama_cpp

    path = Path(str(getattr(llama, "model_path", "") or ""))
    try:
        stat = path.stat()
        model = [str(path.resolve()), stat.st_size, stat.st_mtime_ns]
    except OSError:
        model = [str(path), None, None]
    parts = [FORMAT, model, llama_cpp.__version__, int(llama.n_ctx()), prefix]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


class WarmCache:
    """The folder of saved states and baselines; None: nothing is kept (computed at each start)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder

    # -- the state after the fixed prompt -------------------------------------------------------
    def load_state(self, key: str, window: int) -> tuple[list[int], bytes] | None:
        """(the fixed prompt's tokens, llama.cpp's state after them) saved under `key`, or None."""
        found = self._read_json(f"{key}.state.json")
        data = self._read_bytes(f"{key}.state")
        if found is None or data is None:
            return None
        tokens = found.get("tokens")
        if (found.get("key") != key or not isinstance(tokens, list) or len(tokens) >= window
                or found.get("sha256") != hashlib.sha256(data).hexdigest()):
            return None
        return [int(t) for t in tokens], data

    def save_state(self, key: str, tokens: list[int], data: bytes) -> None:
        if self.folder is None:
            return
        self._write(f"{key}.state", data)
        meta = {"key": key, "tokens": list(tokens), "sha256": hashlib.sha256(data).hexdigest()}
        self._write(f"{key}.state.json", json.dumps(meta).encode("utf-8"))

    # -- the answers' calibration baselines -----------------------------------------------------
    def load_baselines(self, key: str, answers: dict[str, list[int]]) -> dict[str, list[float]]:
        """The saved baselines of these answers whose tokens are still the same."""
        found = self._read_json(f"{key}.baselines.json") or {}
        kept = {}
        for label, tokens in answers.items():
            entry = found.get(label)
            if isinstance(entry, dict) and entry.get("tokens") == list(tokens):
                values = entry.get("logprobs")
                if isinstance(values, list) and len(values) == len(tokens):
                    kept[label] = [float(v) for v in values]
        return kept

    def save_baselines(
        self, key: str, answers: dict[str, list[int]], baselines: dict[str, list[float]]
    ) -> None:
        if self.folder is None:
            return
        found = self._read_json(f"{key}.baselines.json") or {}
        for label, values in baselines.items():
            if label in answers:
                found[label] = {"tokens": list(answers[label]), "logprobs": list(values)}
        self._write(f"{key}.baselines.json", json.dumps(found).encode("utf-8"))

    # -- files ----------------------------------------------------------------------------------
    def _read_bytes(self, name: str) -> bytes | None:
        if self.folder is None:
            return None
        try:
            return (self.folder / name).read_bytes()
        except OSError:
            return None

    def _read_json(self, name: str) -> dict[str, Any] | None:
        raw = self._read_bytes(name)
        try:
            value = json.loads(raw) if raw is not None else None
        except (ValueError, UnicodeDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def _write(self, name: str, data: bytes) -> None:
        """Atomically; a cache that cannot be written is logged, never a failure."""
        assert self.folder is not None
        try:
            write_atomically(self.folder / name, data, durable=False)
        except OSError as exc:
            log.warning("the embedded model's warm-up is not kept (%s): the next start warms up again", exc)


WARM_CACHE = WarmCache()
