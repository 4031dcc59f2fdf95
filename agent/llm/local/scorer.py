"""llama.cpp as a `ranking.TokenModel`: evaluate tokens and read the logits after each one.

The model is loaded without `logits_all` (that would hold n_ctx x vocabulary floats, 1.6 GB for
SmolLM2 at 8192 tokens). `feed` asks llama.cpp's C API for the logits of every token of its own
batch instead, then keeps `Llama`'s bookkeeping (n_tokens, input_ids) as `Llama.eval` would, so
the next `create_completion` reuses what is evaluated.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent.errors import LLMError

if TYPE_CHECKING:  # numpy is imported where it is used: not on the agent's way to its first prompt
    import numpy as np
    import numpy.typing as npt

# Set when the process leaves: evaluation stops at the next batch (see llama_models._close_models).
STOPPING = threading.Event()
PREFIX_BATCH = 64  # tokens of a long prefix evaluated between two looks at STOPPING


class Stopping(LLMError):
    """The process is leaving; what was being evaluated is abandoned."""

    def __init__(self) -> None:
        super().__init__("local", "the agent is stopping", "start it again")


def evaluate(llama: Any, tokens: Sequence[int]) -> None:
    """`llama.eval` in short batches, stopping between two when the process leaves."""
    for start in range(0, len(tokens), PREFIX_BATCH):
        if STOPPING.is_set():
            raise Stopping
        llama.eval(tokens[start : start + PREFIX_BATCH])


def log_softmax_rows(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    import numpy as np

    wide = logits.astype(np.float64)
    top = wide.max(axis=-1, keepdims=True)
    result: npt.NDArray[np.float64] = wide - (top + np.log(np.exp(wide - top).sum(axis=-1, keepdims=True)))
    return result


class LlamaTokenModel:
    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.fed = 0  # tokens evaluated through this model (for usage counts)
        self._stale = False  # llama.cpp's logits belong to a token rewound past
        # The row after the last token of each batch still in the cache, with the tokens before it:
        # a rewind to a batch's end (a ranking's context) reads it again instead of evaluating that
        # token alone, which is both a decode saved and the same numbers (a batch of one is computed
        # by other kernels, a few percent apart on some CPUs, and would rewrite its cache entry).
        self._batch_ends: dict[int, tuple[Any, Sequence[float]]] = {}

    def position(self) -> int:
        return int(self.llama.n_tokens)

    def rewind(self, position: int) -> None:
        if not 0 <= position <= self.position():
            raise ValueError(f"cannot rewind to {position} from {self.position()}")
        if position < self.position():
            self.llama.n_tokens = position  # the KV cache past it is dropped before the next decode
            self._stale = True

    def next_logprobs(self) -> Sequence[float]:
        import llama_cpp

        if self._stale:  # evaluate the last token again: its logits were overwritten since
            position = self.position()
            if position == 0:
                raise ValueError("no context to predict from")
            saved = self._batch_ends.get(position)
            if saved is not None and bool((saved[0] == self.llama.input_ids[:position]).all()):
                return saved[1]
            last = int(self.llama.input_ids[position - 1])
            self.llama.n_tokens = position - 1
            return self.feed([last])[-1]
        pointer = llama_cpp.llama_get_logits_ith(self.llama.ctx, -1)
        import numpy as np

        row = np.ctypeslib.as_array(pointer, shape=(1, self.llama.n_vocab()))
        result: Sequence[float] = log_softmax_rows(row)[0]
        return result

    def feed(self, tokens: Sequence[int]) -> list[Sequence[float]]:
        """Evaluate `tokens` in one batch; the next-token log-probabilities after each of them."""
        import llama_cpp

        if not tokens:
            return []
        if STOPPING.is_set():
            raise Stopping
        if len(tokens) > self.llama.n_batch:  # llama.cpp decodes at most n_batch tokens at once
            step = self.llama.n_batch
            return [row for at in range(0, len(tokens), step) for row in self.feed(tokens[at : at + step])]
        llama, start, count = self.llama, self.position(), len(tokens)
        if start + count > llama.n_ctx():
            raise ValueError(f"{start + count} tokens exceed the context window of {llama.n_ctx()}")
        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(llama.ctx), -1, start, -1)
        batch = llama_cpp.llama_batch_init(count, 0, 1)
        try:
            for i, token in enumerate(tokens):
                batch.token[i] = token
                batch.pos[i] = start + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = True
            batch.n_tokens = count
            status = llama_cpp.llama_decode(llama.ctx, batch)
            if status != 0:
                raise RuntimeError(f"llama_decode returned {status}")
            pointer = llama_cpp.llama_get_logits(llama.ctx)
            import numpy as np

            rows = np.ctypeslib.as_array(pointer, shape=(count, llama.n_vocab()))
            logprobs = log_softmax_rows(rows)
        finally:
            llama_cpp.llama_batch_free(batch)
        llama.input_ids[start : start + count] = tokens
        llama.n_tokens = start + count
        self.fed += count
        self._stale = False
        result: list[Sequence[float]] = list(logprobs)
        self._batch_ends = {at: saved for at, saved in self._batch_ends.items() if at <= start}
        self._batch_ends[start + count] = (llama.input_ids[: start + count].copy(), result[-1])
        return result
