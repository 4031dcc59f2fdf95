"""KEYWORD RULES: a choice made WITHOUT the model, from plain patterns in the owner's words.

The embedded 135M model picks the wrong choice for many plain requests, so a few unambiguous
phrasings are matched here first. Everything these rules decide is labelled `by_rule` in the
decision and counted apart from the model's choices by `bench/llm_local.py`. A rule only picks
the label; the model still fills the values under the grammar, and the same validation follows.
"""

from __future__ import annotations

import re

from agent.commands.parse import platform_of_post
from agent.llm.local.about_me import statement_about_me
from agent.llm.local.everyday import (
    APPROVALS_ASKED,
    CLOCK,
    DONE_ASKED,
    DRY_RUN_ASKED,
    OPEN_BARE_HOST,
    REMINDER,
    STOP_ASKED,
)
from agent.llm.local.intents import ANSWERS, CAPABILITIES, CHAT, RECALL, REFUSE, REPLY, WHO_AM_I

SECRET = r"\b(password|passcode|passphrase|pin|api[ _-]?key|token|secret|credentials?|private key)s?\b"
SHARE = r"\b(post|tweet|toot|publish|share|send|tell|reveal|give|show|leak|print|what)\b"
START = r"^\s*(?:please\s+|can you\s+|could you\s+)?"

GREETING = re.compile(
    r"^\W*(hi|hii+|hello|helo|hey|heyy+|hiya|howdy|yo|good (morning|afternoon|evening|day)|bonjour|salut|"
    r"coucou|hola|"
    r"buen[oa]s|ciao|hallo|servus|moin|ol[aá]|oi|hej|hei|namaste|konnichiwa|merhaba|privet|ahoj)\b"
    r"|^[^\w]+$",  # nothing but emoji and punctuation: a wave, a smile
    re.I)
THANKS = re.compile(r"^\W*(thanks|thank you|thank u|thankyou|thx|thnx|thnks|thanx|tnx|ty|tysm|cheers|ta)\b"
                    r"|\b(thanks|thank you)\W*$", re.I)
HOW_ARE_YOU = re.compile(r"\bhow are (you|u)\b|\bhow'?s it going\b|\bhow do you do\b|^\W*what'?s up\b", re.I)
GOODBYE = re.compile(r"^\W*(bye|goodbye|good night|see you|later)\b|\b(bye|goodbye|see you)\W*$", re.I)
ACKNOWLEDGE = re.compile(
    r"^\W*(ok|okay|k|kk|cool|nice|great|awesome|perfect|sure|got it|alright|fine|lol|haha\w*|hehe\w*|"
    r"hmm+|yes|yeah|yep|no|nope|wow)\b[\W]*(thanks|thank you)?\W*$", re.I)
SMALL_TALK = re.compile("|".join(p.pattern for p in (GREETING, THANKS, HOW_ARE_YOU, GOODBYE, ACKNOWLEDGE)),
                        re.I)
# A greeting or thanks in front of a request ("hey, can you post 'x' on bluesky?"): the request is
# what the rules read.
OPENING = re.compile(
    r"^\W*(hi|hello|hey|hiya|howdy|good (morning|afternoon|evening|day)|thanks|thank you|ok|okay)"
    r"( there| safeclaw)?\b[\s,.!;:-]*", re.I)
# Words that make a message ask for something, whatever small talk surrounds them.
ASKING = re.compile(
    r"\b(write|tell|make|create|compose|draft|generate|give|find|search|show|explain|translate|"
    r"summari[sz]e|post|send|what|who|when|where|why|which|can you|could you|would you|please|"
    r"reply|like|delete|remove|follow|unfollow|block|mute|forget|remember|open|read|remind|alarm|schedule)\b",
    re.I)
# "What do you remember about me?": the memory listed, never a fact to store.
MEMORY_LIST = re.compile(
    r"\bwhat (do|did) you (remember|know)\b|\bwhat (did|have) i (tell|told|teach|taught) you\b", re.I)
# Questions about the accounts are for the platforms (profile, notifications), not for memory.
ABOUT_ACCOUNTS = r"(?!.*\b(followers?|following|follows?|posts?|tweets?|toots?|likes?|notifications?|" \
                 r"mentions?|timeline|feed|profile|account|password|login)\b)"
# "How do I connect my Bluesky account?": where a login goes, told in words (replies.NEEDS).
ACCOUNT_SETUP = re.compile(
    r"^\W*(how|where|can i|could i|i want to|i'd like to|help me)\b.*\b(connect|link|add|set ?up|setup|"
    r"log ?in|login|sign ?in|put|enter|use)\b.*\b(account|bluesky|bsky|mastodon|twitter|reddit|moltbook|"
    r"password|login)\b", re.I)

# (pattern, label) in order; the first match decides. Labels not on offer for a message are skipped.
SHARING_A_SECRET = re.compile(SHARE + r".*" + SECRET + r"|" + SECRET + r".*" + SHARE, re.I)
RULES: list[tuple[re.Pattern[str], str]] = [
    (SHARING_A_SECRET, REFUSE),
    (ACCOUNT_SETUP, CHAT),
    (CLOCK, CHAT),
    (REMINDER, CHAT),
    (DRY_RUN_ASKED, CHAT),
    (STOP_ASKED, CHAT),
    (OPEN_BARE_HOST, CHAT),
    (APPROVALS_ASKED, CHAT),
    (DONE_ASKED, CHAT),
    (re.compile(r"\b(who|what) are you\b|\byour name\b|\bwhat(?:'s| is) safeclaw\b|"
                r"^\W*what(?:'s| is) this( app| program| thing| tool)?\W*$|"
                r"\bwho (made|built|created|wrote|develop\w*) you\b|"
                r"\bare you (a |an )?(bot|robot|ai|human|person|real|machine)\b", re.I), WHO_AM_I),
    (MEMORY_LIST, RECALL),
    (
        re.compile(r"\bw(?:h)?at (can|could|do) (you|u) do\b|\bwhat are you able\b|^\s*help\s*[?!.]*\s*$|"
                   r"\bhow (do|can|should) (i|we) use (you|u|this|safeclaw)\b|"
                   r"\bhow does (this|safeclaw) work\b|\b(get|getting) started\b|"
                   r"\bwhere (do|should) i (start|begin)\b", re.I),
        CAPABILITIES,
    ),
    (re.compile(START + r"reply\b", re.I), REPLY),
    (re.compile(START + r"(post|tweet|toot|publish)\b", re.I), "post"),
    (re.compile(START + r"(like|favou?rite|upvote)\b", re.I), "like"),
    (re.compile(START + r"(delete|remove)\b", re.I), "delete"),
    (re.compile(r"\b(notifications?|mentions)\b", re.I), "notifications"),
    (re.compile(START + r"(search|find|look for|look up)\b", re.I), "search"),
    (re.compile(r"\b(followers?|following|profile|bio)\b", re.I), "profile"),
    (re.compile(START + r"(remember|note that)\b", re.I), "remember"),
    (re.compile(START + r"forget\b", re.I), "forget"),
    (re.compile(START + r"(open|browse|visit|read|summari[sz]e)\b.*https?://", re.I), "open"),
    (SMALL_TALK, CHAT),
    (
        re.compile(r"^" + ABOUT_ACCOUNTS + r"\s*(what|which|who|where|when|how)\b.*"
                   r"\b(my|do i|did i|am i|have i)\b.*\?\s*$", re.I),
        RECALL,
    ),
]
ANSWER_LABELS = frozenset(ANSWERS)
# A web address on no social platform we know: the owner wants that page read.
PAGE_URL = re.compile(r"https?://\S+", re.I)


def keyword_rule(message: str, offered: set[str]) -> str | None:
    """The label a rule picks for `message`, or None to let the model choose."""
    request = OPENING.sub("", message, count=1)
    if request and request != message:
        label = keyword_rule(request, offered)
        if label is not None:
            return label
    if "remember" in offered and statement_about_me(message) and not SHARING_A_SECRET.search(message):
        return "remember"  # "my name is Dana": told, as a person tells a friend, to be remembered
    for pattern, label in RULES:
        if pattern.search(message):
            if label in offered:
                return label
            if label not in ANSWER_LABELS and CHAT in offered:
                # An action asked for without what it needs (a like with no link): said how to
                # ask for it, never guessed into another action.
                return CHAT
    pages = [url for url in PAGE_URL.findall(message) if platform_of_post(url) is None]
    if pages and "open" in offered:
        return "open"
    return None
