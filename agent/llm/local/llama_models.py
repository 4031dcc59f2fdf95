"""The llama.cpp models of the process: each file loaded once and shared by every LocalLLM
(loading costs memory and time), evaluated by one thread at a time, and freed at exit.

llama.cpp contexts are not thread-safe, and freeing a model under a decode crashed the process:
`evaluating()` holds the models for one evaluation, and the exit hook frees them only once no
thread is inside llama.cpp (a warm-up still running stops at its next batch, see scorer.STOPPING).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.errors import LLMError
from agent.llm.local.model_file import INSTALL_HINT
from agent.llm.local.scorer import STOPPING, Stopping
from agent.llm.redact import redact

# No larger than the prompts need (the fixed prompt is ~400 tokens, a message and its fill a few
# hundred): 2048 holds a 135 MB smaller KV cache than SmolLM2's trained 8192.
CONTEXT_TOKENS = 2048
# Half the cores, for a batch too (llama.cpp would take them all): on a machine where other
# processes hold a core, a batch split over every core stalls at each step, measured 8x slower.
THREADS = max((os.cpu_count() or 2) // 2, 1)
CLOSE_WAIT_SECONDS = 60.0
GGUF_MAGIC = b"GGUF"  # the first four bytes of every GGUF model file
native_log = logging.getLogger("safeclaw.agent.llama_cpp")

_models: dict[Path, Any] = {}
_load_lock = threading.Lock()
_busy = threading.Lock()  # held while a model evaluates


def llama_cpp() -> Any:
    """llama-cpp-python, an optional dependency: imported when first needed."""
    try:
        import llama_cpp
    except ImportError:
        raise LLMError("local", "llama-cpp-python is not installed", INSTALL_HINT) from None
    _quiet_native_log(llama_cpp)
    return llama_cpp


_native_log: Any = None  # the C callback, kept alive as long as llama.cpp may call it


def _quiet_native_log(llama_cpp: Any) -> None:
    """llama.cpp's own log lines go to our log at debug level, not onto the owner's terminal:
    the bindings' filter reads llama.cpp's log levels by an older numbering and lets a warning
    such as "n_ctx_per_seq < n_ctx_train" through even with verbose=False."""
    global _native_log
    if _native_log is not None:
        return

    def to_log(level: int, text: bytes, user_data: Any) -> None:
        native_log.debug("%s", text.decode("utf-8", "replace").rstrip())

    _native_log = llama_cpp.llama_log_callback(to_log)
    llama_cpp.llama_log_set(_native_log, ctypes.c_void_p(0))


def loaded_model(path: Path) -> Any:
    """The llama.cpp model of `path` (resolved), loaded on first use and then reused."""
    with _load_lock:
        if STOPPING.is_set():
            raise Stopping
        if path not in _models:
            _models[path] = _load(path)
        return _models[path]


@contextlib.contextmanager
def evaluating() -> Iterator[None]:
    """Hold the models for one evaluation; none once the process is leaving (they may be freed)."""
    with _busy:
        if STOPPING.is_set():
            raise Stopping
        yield


def json_grammar(schema: dict[str, Any]) -> Any:
    """A llama.cpp GBNF grammar that only admits JSON matching `schema`."""
    grammar = llama_cpp().LlamaGrammar
    try:
        return grammar.from_json_schema(json.dumps(schema), verbose=False)
    except (ValueError, RuntimeError, KeyError) as e:
        raise LLMError(
            "local",
            f"cannot build a grammar from the schema: {e}",
            "simplify the schema (llama.cpp supports a subset)",
        ) from None


@atexit.register
def _close_models() -> None:
    """Free models before interpreter teardown (llama.cpp's own finaliser fails that late), once
    no thread evaluates: a warm-up still running (a daemon thread) stops at its next batch."""
    STOPPING.set()
    if not _busy.acquire(timeout=CLOSE_WAIT_SECONDS):
        return  # a thread is stuck inside llama.cpp: leave the models to the process's end
    try:
        with _load_lock:
            for llama in _models.values():
                llama.close()
            _models.clear()
    finally:
        _busy.release()


def _load(path: Path) -> Any:
    llama = llama_cpp().Llama
    try:
        with path.open("rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except OSError as e:
        raise LLMError("local", f"cannot load {path}: {e.strerror}", "is the model file readable?") from None
    if magic != GGUF_MAGIC:  # told before llama.cpp half-builds a model it then fails to free
        raise LLMError("local", f"cannot load {path}: it is not a GGUF model file",
                       "give the path of a GGUF model file llama.cpp supports") from None
    try:
        return llama(
            model_path=str(path),
            n_ctx=CONTEXT_TOKENS,
            n_threads=THREADS,
            n_threads_batch=THREADS,
            verbose=False,
        )
    except (ValueError, RuntimeError) as e:
        raise LLMError(
            "local", f"cannot load {path}: {redact(str(e))}", "is it a GGUF model file llama.cpp supports?"
        ) from None
