"""Classify, then fill: how the embedded model turns one owner's message into SafeClaw's reply.

1. Classify: after a fixed prompt (SafeClaw's persona and the labels on offer, each with what it
   is for) and the owner's message, the model RANKS the labels this message may have: how likely
   it finds SafeClaw's first words for each (choose.py). Generating a label under a grammar
   picked the wrong one for most messages. A labelled keyword rule (rules.py) may pick the label
   first; the decision says so.
2. Fill: it goes on, under a grammar built from that choice's schema (platforms only from the
   catalogue's enum, URLs only from the message), to write the values as JSON.
3. Code words the reply and its `<tool_code>` block, which the loop parses and validates like
   any model's. Ranking and filling are deterministic: the same message gets the same answer.

The fixed prompt is evaluated once per model and catalogue; its llama.cpp state is saved and
loaded before each message, so a message costs only its own tokens (plus one short batch per
label ranked).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

import jsonschema

from agent.llm.local.action_evidence import asked_for
from agent.llm.local.choose import BASELINES, answer_tokens, choose, prompt_key
from agent.llm.local.grammar import object_grammar
from agent.llm.local.intents import CHAT, Intent, can_fill, listed_labels, offered_intents
from agent.llm.local.ranking import Ranked
from agent.llm.local.replies import action_reply, answer_reply, cannot_fill_reply, which_platform_reply
from agent.llm.local.rules import keyword_rule
from agent.llm.local.scorer import LlamaTokenModel, evaluate
from agent.llm.local.warm_cache import WARM_CACHE, cache_key
from agent.llm.turn import TurnRequest
from protocol.model_markup import neutralise

log = logging.getLogger("safeclaw.agent.local")
FILL_TOKENS = 120
QUESTION = "Which one of these does the owner's message ask for?"
PLATFORMS_LINE = (
    "Platforms: bsky (Bluesky), mastodon (Mastodon, toot), reddit (Reddit), x (X, Twitter, tweet), "
    "moltbook (Moltbook)."
)


def unnamed_platforms(intent: Intent) -> list[str]:
    """The platforms an action could still go to when the message named none of them, or several
    (the fill schema narrows the enum to what the message names): empty when it is settled."""
    if intent.action is None or intent.fill is None:
        return []
    enum = (intent.fill.get("properties") or {}).get("platform", {}).get("enum") or []
    return [str(p) for p in enum] if len(enum) > 1 else []


def chatml(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def fixed_prompt(persona: str, labels: list[tuple[str, str]]) -> str:
    """Everything before the owner's message: the same for every message, so evaluated once."""
    lines = [persona.strip(), "", QUESTION, *(f"{label}: {what}" for label, what in labels), PLATFORMS_LINE]
    return chatml("system", "\n".join(lines))


@dataclass
class Decision:
    label: str
    values: dict[str, Any] | None
    reply: str  # what the loop parses: a message, maybe with one <tool_code> block
    by_rule: bool = False  # True: a keyword rule chose the label, not the model
    ranking: list[Ranked] | None = None  # the model's ranking of every label on offer


class PrefixState:
    """The fixed prompt's tokens and the llama.cpp state after evaluating them, per model: in memory,
    and on disk (warm_cache.py) so the next start needs not evaluate them again."""

    def __init__(self) -> None:
        self._saved: dict[tuple[int, str], tuple[list[int], bytes]] = {}
        self._lock = threading.Lock()

    def load(self, llama: Any, prefix: str) -> list[int]:
        """Put `llama` in the state right after `prefix` (evaluating it only the first time)."""
        key = (id(llama), hashlib.sha256(prefix.encode()).hexdigest())
        with self._lock:
            if key not in self._saved:
                self._saved = {k: v for k, v in self._saved.items() if k[0] != id(llama)}  # one per model
                self._saved[key] = self._first_time(llama, prefix)
            tokens, state = self._saved[key]
            set_state(llama, tokens, state)
            return list(tokens)

    @staticmethod
    def _first_time(llama: Any, prefix: str) -> tuple[list[int], bytes]:
        on_disk = cache_key(llama, prefix)
        kept = WARM_CACHE.load_state(on_disk, llama.n_ctx())
        if kept is not None:
            try:
                set_state(llama, *kept)
                return kept
            except RuntimeError:  # another llama.cpp build's state: evaluate it again
                log.info("the saved state of the fixed prompt does not fit this llama.cpp; evaluating it")
        tokens = list(llama.tokenize(prefix.encode(), add_bos=False, special=True))
        llama.reset()
        evaluate(llama, tokens)
        state = get_state(llama)
        WARM_CACHE.save_state(on_disk, tokens, state)
        return tokens, state


PREFIXES = PrefixState()


def get_state(llama: Any) -> bytes:
    """llama.cpp's state (its KV cache for the tokens evaluated), without `Llama.save_state`'s copy
    of the score matrix (n_batch x vocabulary floats, 100 MB, never read here)."""
    import ctypes

    import llama_cpp

    size = llama_cpp.llama_state_get_size(llama.ctx)
    buffer = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_get_data(llama.ctx, buffer, size))
    return bytes(memoryview(buffer)[:written])


def set_state(llama: Any, tokens: list[int], state: bytes) -> None:
    import ctypes

    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_set_data(llama.ctx, buffer, len(state)) != len(state):
        raise RuntimeError("llama.cpp refused the saved state")
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)


PREFIXES = PrefixState()


class ClassifyThenFill:
    def __init__(self, llama: Any, persona: str, use_rules: bool = True) -> None:
        self.llama = llama
        self.persona = persona
        self.use_rules = use_rules
        self.model = LlamaTokenModel(llama)
        self.evaluated_tokens = 0  # this message's prompt tokens (the fixed prompt excluded)
        self.generated_tokens = 0

    def prefix(self, request: TurnRequest) -> str:
        return fixed_prompt(self.persona, self._labels(request))

    @staticmethod
    def _labels(request: TurnRequest) -> list[tuple[str, str]]:
        return listed_labels(request.schemas, request.instructions)

    def warm_up(self, request: TurnRequest) -> None:
        self._baseline(request, self._labels(request))
        PREFIXES.load(self.llama, self.prefix(request))

    def decide(self, request: TurnRequest) -> Decision:
        intents = self.offered(request)
        label, ranking, tokens = self.classify(request, list(intents))
        by_rule = ranking is None
        intent = intents[label]
        values = None
        platforms = unnamed_platforms(intent)
        if platforms:
            return Decision(label, None, which_platform_reply(intent, platforms), by_rule, ranking)
        if intent.fill is not None:
            tokens = tokens + self._tokens(label + "\n")
            filled = self._generate(tokens, object_grammar(intent.fill), FILL_TOKENS)
            try:
                values = json.loads(filled)
            except json.JSONDecodeError:  # cut at FILL_TOKENS: the model ran on inside a string
                reply = cannot_fill_reply(intent, "the details ran on")
                return Decision(label, None, reply, by_rule, ranking)
        return Decision(label, values, self._reply(intent, values, request), by_rule, ranking)

    @staticmethod
    def offered(request: TurnRequest) -> dict[str, Intent]:
        """The choices this message may get: someone else's words get an answer, never an action,
        and a choice is offered only when this message can fill it."""
        intents = offered_intents(request)
        if request.outside_author is not None:
            intents = {label: intent for label, intent in intents.items() if intent.action is None}
        return {label: intent for label, intent in intents.items() if can_fill(intent, request)}

    def classify(
        self, request: TurnRequest, choosable: list[str]
    ) -> tuple[str, list[Ranked] | None, list[int]]:
        """(the label, the model's ranking — None when a keyword rule chose —, the tokens
        evaluated: the fixed prompt and the message, which the fill goes on from)."""
        message = neutralise(request.user_message).strip()
        label = keyword_rule(message, set(choosable)) if self.use_rules else None
        if label is not None:
            return label, None, self._enter(request, message)
        if self.use_rules:
            intents = self.offered(request)
            pointed = asked_for({name: intents[name] for name in choosable}, request)
            choosable = [name for name in choosable if intents[name].action is None or name in pointed]
            if not pointed:
                # No rule matched and the message points at no action: an answer in words (small
                # talk, or a request nothing here can do, said so), never a guess at an action.
                return CHAT, None, self._enter(request, message)
        listed = [(name, what) for name, what in self._labels(request) if name in choosable]
        answers = answer_tokens(listed, self._tokens)
        baseline = self._baseline(request, listed)
        tokens = self._enter(request, message)
        choice = choose(self.model, answers, baseline)
        log.debug("ranked %s", [(r.name, round(r.score, 2)) for r in choice.ranking[:3]])
        return choice.label, choice.ranking, tokens

    def _enter(self, request: TurnRequest, message: str) -> list[int]:
        """Evaluate the owner's message after the fixed prompt; the tokens so far."""
        prefix_tokens = PREFIXES.load(self.llama, self.prefix(request))
        turn = self._tokens(chatml("user", message) + "<|im_start|>assistant\n")
        self.model.feed(turn)
        self.evaluated_tokens = len(turn)
        return prefix_tokens + turn

    def _baseline(self, request: TurnRequest, listed: list[tuple[str, str]]) -> dict[str, list[float]]:
        prefix = self.prefix(request)
        answers = answer_tokens(listed, self._tokens)
        enter = lambda message: self._enter(request, message)  # noqa: E731
        return BASELINES.get(prompt_key(id(self.llama), prefix), answers, self.model, enter,
                             cache_key(self.llama, prefix))

    def _reply(self, intent: Intent, values: dict[str, Any] | None, request: TurnRequest) -> str:
        if intent.action is None:
            return answer_reply(intent.label, values, request)
        params = intent.to_params(values or {})
        validator = jsonschema.Draft202012Validator(request.schemas[intent.action])
        errors = sorted(validator.iter_errors(params), key=str)
        if errors:
            return cannot_fill_reply(intent, errors[0].message)
        return action_reply(intent.action, params)

    def _tokens(self, text: str) -> list[int]:
        return list(self.llama.tokenize(text.encode(), add_bos=False, special=True))

    def _generate(self, tokens: list[int], grammar_text: str, max_tokens: int) -> str:
        from llama_cpp import LlamaGrammar

        grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
        out = self.llama.create_completion(
            tokens,
            max_tokens=max_tokens,
            temperature=0.0,
            top_k=1,
            repeat_penalty=1.0,
            grammar=grammar,
            seed=0,
        )
        self.generated_tokens += int(out["usage"]["completion_tokens"])
        log.debug("generated %r", out["choices"][0]["text"])
        return str(out["choices"][0]["text"])
