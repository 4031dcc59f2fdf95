"""The patterns of text written to steer a model (ignore your instructions, you are now, fake role
lines, template tokens, hidden characters...) and why a text reads as an injection: the learned
detector's verdict and the structural patterns it matches. A signal for the model and the logs,
never a guard.
"""

from __future__ import annotations

import re
import unicodedata

from protocol.injection_detector import MAX_SCAN_CHARS, looks_injected
from protocol.model_markup import INVISIBLE, TEMPLATE_TOKENS

_DROP_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))

# Secrets worth flagging after "the ..."; the weaker words below only after "your"/"its".
_STRONG_SECRETS = (
    r"(?:api[\s_-]?keys?|credentials?|(?:secret|access|auth|api|bearer)\s+tokens?|"
    r"env(?:ironment)?\s+variables?|\.env(?:\s+file)?|private\s+keys?|system\s+prompt)"
)
_OWN_SECRETS = (
    r"(?:passwords?|passphrases?|secrets?|tokens?|"
    r"(?:hidden\s+|original\s+|initial\s+)?instructions|config(?:uration)?|"
    r"memory(?:\.json|\s+file)?|soul\.md|" + _STRONG_SECRETS[3:]
)
_ASKING_VERBS = (
    r"(?:reveal|print|show|send|leak|output|share|give|post|dump|tell|paste|expose|disclose|"
    r"email|dm|forward|repeat|write|read\s+out|spell\s+out)"
)
_MACHINE = r"(?:ai|bots?|agents?|llms?|assistants?|language\s+models?|chatbots?|models?)"

_INJECTION_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in [
        (
            "ignore_instructions",
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}?"
            r"\b(?:previous|prior|above|earlier|preceding|original|all|any|your|the|system|safety)\b[^.\n]{0,30}?"
            r"\b(?:instructions?|prompts?|rules|directives|guidelines|context|messages?|constraints|policy|policies)\b"
            r"|\b(?:do\s+not|don't|stop)\s+(?:follow|obey)\w*\s+(?:your|the|any)\s+"
            r"(?:original\s+|previous\s+|prior\s+|initial\s+|system\s+)?(?:instructions|rules|guidelines|prompt)"
            r"|\brules\s+no\s+longer\s+apply|\bno\s+longer\s+bound\s+by",
        ),
        (
            "ignore_instructions_multilingual",
            r"\bignore[zr]?\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes)"  # fr
            r"|\bignora\w*\s+(?:todas\s+|tutte\s+)?(?:las\s+|le\s+|as\s+)?(?:instrucciones|istruzioni|instruções)"
            r"|\b(?:vergiss|ignorier\w*)\b[^.\n]{0,30}\banweisungen"  # de
            r"|忽略.{0,12}(?:指令|指示|说明|提示)|(?:指示|命令).{0,12}無視|無視.{0,12}(?:指示|命令)"  # zh, ja
            r"|игнорир\w*[^.\n]{0,30}инструкци|забудь[^.\n]{0,30}инструкци",
        ),  # ru
        (
            "new_instructions",
            r"\b(?:new|updated|real|actual|true|revised)\s+(?:system\s+)?"
            r"(?:instructions?|directives?|orders|prompt|rules)\b\s*(?::|follow|are|is)",
        ),
        (
            "role_override",
            r"\byou\s+are\s+(?:now|no\s+longer)\b"
            r"|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|jailbroken|different|evil|dan)\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b"
            r"|\b(?:role-?play|let'?s\s+play\s+a\s+game)\b[^\n]{0,80}\b(?:no\s+rules|unrestricted|passwords?|"
            r"api\s+keys?|secrets?)\b",
        ),
        (
            "system_prompt",
            r"\b(?:developer\s+mode|jailbreak|jailbroken|god\s+mode|do\s+anything\s+now)\b"
            r"|\bwhat\s+(?:are|were)\s+your\s+(?:instructions|rules|system\s+prompt)"
            r"|\brepeat\s+(?:everything|all|the\s+(?:text|words))\s+above",
        ),
        (
            "fake_role",
            r"(?:^|\n)\s*(?:system|assistant|developer|human)\s*:\s*\S"
            r"|\"role\"\s*:\s*\"(?:system|assistant|developer)\"|\[system\]\(#",
        ),
        (
            "fake_system_message",
            r"\bbegin\s+system\b|\b(?:system|admin)\s+(?:override|message|notice)\s*[:.]"
            r"|\bsafety\s*:\s*(?:off|disabled)|\bend\s+of\s+(?:user\s+)?(?:content|input)\s*\.",
        ),
        (
            "secret_exfiltration",
            r"(?<!never )(?<!not )(?<!n't )\b" + _ASKING_VERBS + r"s?\b[^.\n]{0,40}?"
            r"(?:\b(?:your|its)\s+(?:[\w-]+\s+){0,2}?"
            + _OWN_SECRETS
            + r"|\b(?:the|all)\s+(?:[\w-]+\s+){0,2}?"
            + _STRONG_SECRETS
            + r")(?!\w)",
        ),
        (
            "addressed_to_machine",
            r"\bif\s+you\s+are\s+an?\s+" + _MACHINE + r"\b"
            r"|\b" + _MACHINE + r"\s+(?:reading|summari[sz]ing|processing|scraping|parsing)\s+this"
            r"(?:\s+(?:post|message|thread|text|page|comment|tweet))?\s*[:,.!]"
            r"|\b(?:instructions?|notes?|message)\s+(?:for|to)\s+(?:the\s+|any\s+|all\s+)?" + _MACHINE + r"\b"
            r"|\b(?:attention|dear)\s+(?:the\s+)?" + _MACHINE + r"\s*[:,!]"
            r"|\bto\s+(?:the|any|all)\s+(?:ai|bots?|agents?|llms?|language\s+models?)\s*[:,]",
        ),
        ("tool_call", r"<\s*/?\s*tool_code|\btool_code\b|\"name\"\s*:\s*\"_?[A-Z][A-Z_]{3,}\""),
        ("template_token", TEMPLATE_TOKENS.pattern),
        (
            "action_command",
            r"\b(?:immediately|now|must|should)\s+(?:delete|post|reply|send|transfer|follow|"
            r"execute|run|call|invoke|repost)\b[^.\n]{0,60}\b(?:posts?|tweets?|messages?|accounts?|wallets?|"
            r"commands?|actions?|tools?|followers?)\b",
        ),
        # Joiners join emoji and the letters of some scripts; beside ASCII they only hide words.
        ("hidden_text", r"[\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]"
                        r"|(?<=[\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?=[\x00-\x7f])"),
    ]
]

# The patterns the flag still raises on its own: markup and shapes no ordinary post has (chat-
# template tokens, tool-call tags, role lines, hidden characters), cheap to find. The patterns for
# wording ("ignore ... instructions", "you are now", ...) were tuned on their own corpus and miss
# most injections they were not written for; the learned detector judges wording instead.
_STRUCTURAL_PATTERNS = frozenset(
    {"template_token", "tool_call", "fake_role", "fake_system_message", "hidden_text"}
)
_STRUCTURAL = [(name, pattern) for name, pattern in _INJECTION_PATTERNS if name in _STRUCTURAL_PATTERNS]


def pattern_reasons(
    text: str, patterns: list[tuple[str, re.Pattern[str]]] = _INJECTION_PATTERNS
) -> list[str]:
    """Names of the injection patterns `text` matches (an empty list when none does)."""
    folded = unicodedata.normalize("NFKC", text)
    # Also match with invisible characters removed, so "ig\u200bnore previous instructions" is seen.
    visible = folded.translate(_DROP_INVISIBLE)
    texts = (folded, visible) if visible != folded else (folded,)
    return [name for name, found in patterns if any(found.search(t) for t in texts)]


def injection_reasons(text: str) -> list[str]:
    """Why `text` reads as written to steer a model (an empty list when it does not): the learned
    detector's verdict ("detector") and the structural patterns it matches. A signal, not a guard."""
    half = MAX_SCAN_CHARS // 2
    head = text if len(text) <= MAX_SCAN_CHARS else text[:half] + "\n" + text[-half:]
    reasons = pattern_reasons(head, _STRUCTURAL)
    return [*reasons, "detector"] if looks_injected(text) else reasons
