"""The LLM judge: scores an explanation 0 to 10 against the gold summary; 6 or more passes."""

from __future__ import annotations

from typing import Any

from agent.llm.base import BaseLLM
from protocol.untrusted import fence

PASS_SCORE = 6
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
        "reason": {"type": "string", "maxLength": 400},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}
JUDGE_RULES = """You evaluate an explainer of Bluesky posts. Compare the explanation's bullets with
the GOLD SUMMARY of the background the post needs. Score 0 to 10 (6 or more is a pass):
high when the bullets cover the gold summary's key background and explain why it matters; low
when they miss its main point, summarise the post instead, cite nothing, or state things the
sources and gold summary do not support (an invented fact caps the score at 4). Be strict.
Answer with JSON {"score", "reason"}."""


def judge_prompt(post_text: str, gold: str, bullets: list[str]) -> str:
    listed = "\n".join(f"- {b}" for b in bullets) or "(no bullets)"
    return "\n".join(
        [
            JUDGE_RULES,
            "",
            "POST:",
            fence("post", post_text),
            "",
            "GOLD SUMMARY:",
            gold,
            "",
            "EXPLANATION BULLETS:",
            fence("bullets", listed),
        ]
    )


def judge(llm: BaseLLM, post_text: str, gold: str, bullets: list[str]) -> dict[str, Any]:
    """{score, reason, passed}; raises LLMError when the judge cannot answer."""
    verdict = llm.chat_json(judge_prompt(post_text, gold, bullets), JUDGE_SCHEMA)
    return {**verdict, "passed": verdict["score"] >= PASS_SCORE}
