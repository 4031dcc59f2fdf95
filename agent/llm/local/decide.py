"""Classify, then fill: how the embedded model turns one owner's message into SafeClaw's reply.

1. Classify: after a fixed prompt (SafeClaw's persona and the labels on offer, each with what it
   is for), the model writes one label under a grammar that allows only the labels this message
   may have. A labelled keyword rule (rules.py) may pick the label first; the decision says so.
2. Fill: it goes on, under a grammar built from that choice's schema (platforms only from the
   catalogue's enum, URLs only from the message), to write the values as JSON.
3. Code words the reply and its `<tool_code>` block, which the loop parses and validates like
   any model's. Sampling is greedy: the same message gets the same answer.

The fixed prompt is evaluated once per model and catalogue; its llama.cpp state is saved and
loaded before each message, so a message costs only its own tokens.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

import jsonschema

from agent.llm.local.grammar import label_grammar, object_grammar
from agent.llm.local.intents import CHAT, Intent, listed_labels, offered_intents
from agent.llm.local.replies import action_reply, answer_reply, cannot_fill_reply
from agent.llm.local.rules import keyword_rule
from agent.llm.turn import TurnRequest
from protocol.untrusted import neutralise

log = logging.getLogger("safeclaw.agent.local")
LABEL_TOKENS = 24  # a grammar may force a label out a few letters at a time
FILL_TOKENS = 120
QUESTION = "Which one of these does the owner's message ask for?"
CHAT_GRAMMAR = 'root ::= "{\\"text\\": \\"" [^"\\\\\\x00-\\x1f<]+ "\\"}"\n'
PLATFORMS_LINE = (
    "Platforms: bsky (Bluesky), mastodon (Mastodon, toot), reddit (Reddit), x (X, Twitter, tweet), "
    "moltbook (Moltbook)."
)


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


class PrefixState:
    """The fixed prompt's tokens and the llama.cpp state after evaluating them, per model."""

    def __init__(self) -> None:
        self._saved: dict[tuple[int, str], tuple[list[int], Any]] = {}
        self._lock = threading.Lock()

    def load(self, llama: Any, prefix: str) -> list[int]:
        """Put `llama` in the state right after `prefix` (evaluating it only the first time)."""
        key = (id(llama), hashlib.sha256(prefix.encode()).hexdigest())
        with self._lock:
            if key not in self._saved:
                tokens = llama.tokenize(prefix.encode(), add_bos=False, special=True)
                llama.reset()
                llama.eval(tokens)
                self._saved = {k: v for k, v in self._saved.items() if k[0] != id(llama)}  # one per model
                self._saved[key] = (tokens, llama.save_state())
            tokens, state = self._saved[key]
            llama.load_state(state)
            return list(tokens)


PREFIXES = PrefixState()


class ClassifyThenFill:
    def __init__(self, llama: Any, persona: str, use_rules: bool = True) -> None:
        self.llama = llama
        self.persona = persona
        self.use_rules = use_rules
        self.evaluated_tokens = 0  # this message's prompt tokens (the fixed prompt excluded)
        self.generated_tokens = 0

    def prefix(self, request: TurnRequest) -> str:
        return fixed_prompt(self.persona, listed_labels(request.schemas, request.instructions))

    def warm_up(self, request: TurnRequest) -> None:
        PREFIXES.load(self.llama, self.prefix(request))

    def decide(self, request: TurnRequest) -> Decision:
        prefix_tokens = PREFIXES.load(self.llama, self.prefix(request))
        message = neutralise(request.user_message).strip()
        tokens = prefix_tokens + self._tokens(chatml("user", message) + "<|im_start|>assistant\n")
        self.evaluated_tokens = len(tokens) - len(prefix_tokens)
        intents = offered_intents(request)
        if request.outside_author is not None:  # someone else's words: answer, never act
            intents = {label: intent for label, intent in intents.items() if intent.action is None}
        choosable = [
            label
            for label, intent in intents.items()
            if intent.fill is not None or not _needs_fill(intent, request)
        ]
        label = keyword_rule(message, set(choosable)) if self.use_rules else None
        by_rule = label is not None
        if label is None:
            label = self._generate(tokens, label_grammar(choosable), LABEL_TOKENS).strip()
            if label not in intents:  # cut short at LABEL_TOKENS: the one label it began, else chat
                begun = [name for name in choosable if name.startswith(label)]
                label = begun[0] if len(begun) == 1 else CHAT
        intent = intents[label]
        values = None
        if intent.fill is not None or label == CHAT:
            tokens = tokens + self._tokens(label + "\n")
            grammar = CHAT_GRAMMAR if label == CHAT else object_grammar(intent.fill or {})
            filled = self._generate(tokens, grammar, FILL_TOKENS)
            try:
                values = json.loads(filled)
            except json.JSONDecodeError:  # cut at FILL_TOKENS: the model ran on inside a string
                return Decision(
                    label, None, cannot_fill_reply(intent.action or label, "the details ran on"), by_rule
                )
        return Decision(label, values, self._reply(intent, values, request), by_rule)

    def _reply(self, intent: Intent, values: dict[str, Any] | None, request: TurnRequest) -> str:
        if intent.action is None:
            return answer_reply(intent.label, values, request)
        params = intent.to_params(values or {})
        validator = jsonschema.Draft202012Validator(request.schemas[intent.action])
        errors = sorted(validator.iter_errors(params), key=str)
        if errors:
            return cannot_fill_reply(intent.action, errors[0].message)
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


def _needs_fill(intent: Intent, request: TurnRequest) -> bool:
    """An action whose params cannot be empty, with nothing to fill them with."""
    schema = request.schemas.get(intent.action or "")
    return schema is not None and jsonschema.Draft202012Validator(schema).is_valid({}) is False
