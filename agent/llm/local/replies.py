"""The words of the embedded model's replies: written here, so a 135M model cannot garble them.

Every piece of text that came from the owner, from memory or from the model is neutralised
before it goes into a reply, and the action block is JSON with '<' escaped, so nothing inside
can open or close a `<tool_code>` block of its own.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from agent.commands.describe import asking, platform_name
from agent.llm.local.action_evidence import content_words
from agent.llm.local.everyday import (
    APPROVALS_ASKED,
    CLOCK,
    DONE_ASKED,
    DRY_RUN_ASKED,
    OPEN_BARE_HOST,
    REMINDER,
    REMINDERS_REPLY,
    STOP_ASKED,
    clock_reply,
    unquoted_post_reply,
)
from agent.llm.local.intents import CAPABILITIES, CHAT, RECALL, REFUSE, WHO_AM_I, Intent
from agent.llm.local.message_values import PLATFORM_WORDS
from agent.llm.local.rules import (
    ACCOUNT_SETUP,
    ACKNOWLEDGE,
    ASKING,
    GOODBYE,
    GREETING,
    HOW_ARE_YOU,
    MEMORY_LIST,
    OPENING,
    SMALL_TALK,
    THANKS,
)
from agent.llm.turn import TurnRequest
from protocol.model_markup import neutralise

IDENTITY = (
    "I am SafeClaw, your personal AI agent. I act on the social web for you (post, reply, like, "
    "delete, read notifications, open web pages) and remember what you tell me. I hold no "
    "passwords: a separate router does, and it checks everything I ask before it acts."
)
ABILITIES = (
    "I can post, reply, like and delete posts on Bluesky, Mastodon, Reddit, X and Moltbook, search "
    "public Bluesky posts, read your notifications, open a web page and summarise it, and remember "
    "facts about you. I run on a small embedded model, so for anything exact use a command: /help "
    "lists them."
)
REFUSAL = (
    "I won't do that: I never reveal or post secrets such as passwords, keys or tokens, and I "
    "don't do harm. I hold no credentials anyway."
)
COMMAND_OF = {
    "CREATE_POST": "/post <platform> <text>",
    "LIKE_POST": "/like <post URL>",
    "DELETE_POST": "/delete <post URL>",
    "GET_NOTIFICATIONS": "/notifications <platform>",
    "SEARCH_POSTS": "/search <words>",
    "_MEMORY_WRITE": "/remember <key> = <value>",
    "_MEMORY_FORGET": "/forget <key>",
    "_BROWSER_VISION": "/browse <url>",
}


def tool_code(name: str, params: dict[str, Any]) -> str:
    block = json.dumps([{"name": name, "params": params}], ensure_ascii=False).replace("<", "\\u003c")
    return f"<tool_code>{block}</tool_code>"


def quoted(text: Any, limit: int = 200) -> str:
    shown = neutralise(str(text)).replace("\n", " ")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def action_message(name: str, params: dict[str, Any]) -> str:
    where = platform_name(params.get("platform"))
    if name == "CREATE_POST" and params.get("reply_to"):
        return f"Replying on {where} to {quoted(params['reply_to'])}: “{quoted(params['text'])}”."
    if name == "CREATE_POST":
        return f"Posting on {where}: “{quoted(params['text'])}”."
    if name in ("LIKE_POST", "DELETE_POST"):
        verb = "Liking" if name == "LIKE_POST" else "Deleting"
        return f"{verb} {quoted(params['post_id'])} on {where}."
    if name == "GET_NOTIFICATIONS":
        return f"Here are your notifications on {where}."
    if name == "_MEMORY_WRITE":
        [(key, value)] = params["new_memory"].items()
        return f"I will remember: {quoted(key, 60)} = {quoted(value)}."
    if name == "_MEMORY_FORGET":
        return f"Forgetting {quoted(', '.join(params['keys']), 80)}."
    if name == "_BROWSER_VISION":
        return f"Opening {quoted(params['url'])}."
    doing = asking(name, params)
    return f"I will {doing}."


def action_reply(name: str, params: dict[str, Any]) -> str:
    return f"{action_message(name, params)} {tool_code(name, params)}"


WHAT_I_DO = (
    "I can post words you give me, reply to, like or delete a post by its link, show your "
    "notifications, open a web page, and remember facts you tell me. /help lists the commands."
)
# No file or host names in these fixed words: in a turn that read outside text, a reply's hosts the
# owner did not write are shown as "[outside: …]" (agent/flow/reply_links.py).
BIGGER_MODEL = "a larger model can (Ollama, OpenAI or Gemini: the README says how to start one)"
POST_WORDS = frozenset({"post", "tweet", "toot", "publish", "thread"}) | frozenset(
    word for words in PLATFORM_WORDS.values() for word in words if len(word) > 1
)


def cannot_fill_reply(intent: Intent, problem: str) -> str:
    command = COMMAND_OF.get(intent.action or "")
    hint = f" Say it as a command instead: {command}" if command else ""
    return (
        f"I understood: {intent.description}, but I could not get the details right "
        f"({quoted(problem, 120)}).{hint}"
    )


def which_platform_reply(intent: Intent, platforms: list[str]) -> str:
    """An action on a platform the message does not name (or names several of): asked, never guessed."""
    command = COMMAND_OF.get(intent.action or "", "")
    example = f" or use {command}" if command else ""
    return (f"Which platform? Name one in your message (… on Bluesky){example}; platforms: "
            f"{', '.join(platforms)}. Nothing was done.")


LEAVING = "Bye! quit (or Ctrl-D) leaves the console; I'll remember what you told me."


def small_talk_reply(message: str) -> str:
    if GOODBYE.search(message):  # "thanks, bye": leaving comes first
        return LEAVING
    if ACKNOWLEDGE.search(message):
        return "OK! Tell me what to do next; /help lists the commands."
    if THANKS.search(message):
        return f"You're welcome! {WHAT_I_DO}"
    if HOW_ARE_YOU.search(message):
        return f"I'm fine, thanks for asking! {WHAT_I_DO}"
    if GREETING.search(message):
        return f"Hello! I'm SafeClaw, your personal agent for the social web. {WHAT_I_DO}"
    return f"Hello! {WHAT_I_DO}"


STATEMENT_OF_FACT = re.compile(
    r"^\W*my\s+(?P<key>.{1,60}?)\s+(?:is called|is named|are called|is|are)\s+(?P<value>.{1,200}?)\W*$", re.I
)


# Actions asked for without what they need (a post's link), or that nothing here does: how to ask.
NEEDS = [
    (ACCOUNT_SETUP,
     "To connect an account, put its login in router/.env and start SafeClaw again: for Bluesky, "
     "BSKY_HANDLE=your handle and BSKY_PASSWORD=an app password (Bluesky's settings, App "
     "passwords); the example settings file that comes with SafeClaw names the other platforms' "
     "settings. Only the router reads that file, never me. Until then posts are only recorded "
     "(dry run), not sent."),
    (DRY_RUN_ASKED,
     "/status says whether dry run is on. While it is (no account connected yet), what I post, like "
     "or delete is written to the router's outbox file, not sent, and my answer says \"dry run\". To "
     "send for real, put an account's login in router/.env and start SafeClaw again: with a login "
     "there, dry run is off by itself."),
    (APPROVALS_ASKED,
     "/approvals lists what waits for your decision; decide on the dashboard or with "
     "./safeclaw approve <id> or ./safeclaw deny <id> in a terminal. Nothing was done."),
    (DONE_ASKED,
     "I keep no list of my own: each answer above says what was done. The dashboard shows every "
     "command the router took, newest first, and in dry run the router's outbox file holds what "
     "would have been sent."),
    (STOP_ASKED,
     "Only you can stop posting, from a terminal beside this one: ./safeclaw stop-posting turns the "
     "kill switch on (nothing is posted or deleted, not even what is already queued) and "
     "./safeclaw resume-posting lifts it; the dashboard has the same switch. Nothing was done."),
    (re.compile(r"\b(passwords?|logins?|credentials?|keys?)\b.*\b(safe|secure|protected|private)\b", re.I),
     "Your passwords stay with the router: I never see them. It alone holds the logins (in "
     "router/.env) and keeps them out of everything I read and everything it answers."),
    (re.compile(r"\b(see|know|read|have|access|store|keep|save|hold)\b.*\b(passwords?|logins?|credentials?)\b",
                re.I),
     "No: I never see your passwords. The router alone holds the logins (in router/.env), and it keeps "
     "them out of everything I read."),
    (re.compile(r"\b(trending|trends?|popular|viral|what'?s new|what is new|what'?s happening|news)\b", re.I),
     "I can't see what is trending, but I can search public Bluesky posts: search bluesky for <words> "
     "(search bluesky for cats). Nothing was done."),
    (re.compile(r"\b(un)?(follow|block|mute)\b|\b(dms?|direct message|private message)\b|"
                r"\bsend (a |an )?message\b", re.I),
     "I can't follow, block, mute or message people. " + WHAT_I_DO + " Nothing was done."),
    (re.compile(r"\b(reply|respond|answer)\b", re.I),
     "To reply I need the post's link and your words in quotes: reply to <post URL> \"Congrats!\" "
     "(or /reply <post URL> <text>). Nothing was done."),
    (re.compile(r"\b(delete|remove|erase)\b", re.I),
     "I delete one post at a time, by its link: delete <post URL> (or /delete <post URL>). "
     "Nothing was done."),
    # "like" asked for, not "what's the weather like" or "I like cats"
    (re.compile(r"^\W*(please\s+|can you\s+|could you\s+)?(like|favou?rite|upvote)\b|"
                r"\b(like|favou?rite|upvote)\s+(this|that|the|a|an|my|their|his|her|its)\s+"
                r"(post|tweet|toot|skeet|status|comment)\b", re.I),
     "To like a post I need its link: like <post URL> (or /like <post URL>). Nothing was done."),
    (re.compile(r"\bforget\b", re.I),
     "I found no fact of that name to forget: /memory lists what I remember, /forget <key> forgets one. "
     "Nothing was done."),
]


def cannot_reply(message: str) -> str:
    """A request none of the actions does: said plainly, with what would do it. Nothing ran."""
    message = OPENING.sub("", message, count=1) or message
    if CLOCK.search(message):
        return clock_reply(datetime.now().astimezone())
    if REMINDER.search(message):
        return REMINDERS_REPLY
    unquoted = unquoted_post_reply(message)
    if unquoted is not None:
        return unquoted
    page = OPEN_BARE_HOST.match(message)
    if page:  # the owner's own address, shown back whole
        host = quoted(page.group("host"), 200)
        return (f"To open a page I need its whole address: open https://{host} (or /browse {host}). "
                "Nothing was done.")
    fact = STATEMENT_OF_FACT.match(message)
    if fact:
        key, value = quoted(fact.group("key"), 60), quoted(fact.group("value"), 100)
        return (f"I did not store that. To have me remember it, say: remember that my {key} is {value} "
                f"(or /remember {key} = {value}).")
    for pattern, how in NEEDS:
        if pattern.search(message):
            return how
    words = {w.lower().strip(".,;:!?'\"") for w in message.split()} | content_words(message)
    if words & POST_WORDS:
        return (
            "I can't write a post for you: the embedded model only publishes words you give it. Put "
            'them in quotes (post "Spring is here" on bluesky) or use /post <platform> <text>; to have '
            f"a post written for you, {BIGGER_MODEL}. Nothing was posted."
        )
    return (
        "I can't do that: the embedded model can't write texts, look things up (news, the weather) or "
        f"hold a conversation; {BIGGER_MODEL}. Nothing was done. {WHAT_I_DO}"
    )


def chat_reply(message: str) -> str:
    """Small talk gets small talk; anything that asks for something (even after "hi") gets a plain
    "I can't", with what would."""
    rest = SMALL_TALK.sub(" ", message)
    if SMALL_TALK.search(message) and not ASKING.search(rest):
        return small_talk_reply(message)
    return cannot_reply(message)


def recalled(values: dict[str, Any] | None, request: TurnRequest) -> str:
    key = (values or {}).get("key")
    if key is None and MEMORY_LIST.search(request.user_message):
        if not request.memory:
            return "I remember nothing about you yet. Tell me with /remember <key> = <value>."
        facts = request.memory.items()
        shown = "; ".join(f"{quoted(k, 60)} — {quoted(entry_text(v), 100)}" for k, v in facts)
        return f"What I remember: {shown}."
    if not request.memory:
        return "I don't remember anything about you yet. Tell me with /remember <key> = <value>."
    if key not in request.memory:
        return "I don't remember that. /memory shows what I do remember."
    return f"You told me: {quoted(key, 60)} — {quoted(entry_text(request.memory[key]))}."


def entry_text(entry: Any) -> str:
    value = entry.get("value") if isinstance(entry, dict) and "value" in entry else entry
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def answer_reply(label: str, values: dict[str, Any] | None, request: TurnRequest) -> str:
    if label == WHO_AM_I:
        return IDENTITY
    if label == CAPABILITIES:
        return ABILITIES
    if label == REFUSE:
        return REFUSAL
    if label == RECALL:
        return recalled(values, request)
    if label == CHAT:
        return chat_reply(request.user_message)
    return "I am not sure what you mean. /help lists what I can do for certain."
