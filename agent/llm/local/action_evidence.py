"""Which of the offered actions the owner's message itself points at: an action the message gives
no sign of is never offered to the embedded model (a poem request once ran MOLTBOOK_FEED)."""

from __future__ import annotations

import re
from collections import Counter

from agent.llm.local.intents import Intent, describe, label_of, names_by_url
from agent.llm.local.message_values import COMMON_WORDS, PLATFORM_WORDS, URL
from agent.llm.turn import TurnRequest

# Words that say nothing about which action is meant: function words, the platforms' names (a
# platform is named for any action), and verbs used for every action alike.
NOT_EVIDENCE = COMMON_WORDS | frozenset(
    {"and", "or", "for", "with", "about", "from", "at", "by", "it", "this", "that", "one", "own", "new",
     "some", "any", "all", "please", "can", "could", "would", "will", "do", "does", "what", "whats",
     "read", "get", "show", "see", "check", "make", "write", "put", "give", "tell", "find", "send",
     "platform", "social", "account", "returns", "id"}
) | frozenset(word for words in PLATFORM_WORDS.values() for word in words)


def content_words(text: str) -> set[str]:
    """The words of `text` that can say what is meant: lower case, no plural s, not in NOT_EVIDENCE."""
    words = {w.lower().strip(".,;:!?()[]'“”‘’\"").replace("'", "") for w in re.split(r"[\s_/-]+", text)}
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w and w not in NOT_EVIDENCE}


def asked_for(intents: dict[str, Intent], request: TurnRequest) -> set[str]:
    """The labels of the actions the message itself points at: it names the post or page the
    action works on by its URL, or shares a word with the action's name, label or description
    that at most two actions have ("post" is in most of them, "feed" in one). An action the
    message gives no sign of is never offered (a poem request once ran MOLTBOOK_FEED)."""
    said = content_words(URL.sub(" ", request.user_message))
    catalogue = {
        action: content_words(f"{label_of(action)} {describe(action, request.instructions)} {action}")
        for action in request.schemas
    }
    shared_by = Counter(word for words in catalogue.values() for word in words)
    pointed = {
        label
        for label, intent in intents.items()
        if intent.action in catalogue
        and not names_by_url(intent)
        and any(shared_by[word] <= 2 for word in catalogue[intent.action] & said)
    }
    if URL.search(request.user_message):
        pointed |= {label for label, intent in intents.items() if intent.action and names_by_url(intent)}
    return pointed
