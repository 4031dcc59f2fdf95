"""What a router can do, in the words an owner reads on `./safeclaw status` and the dashboard,
never the skills' own names (AUTH_TEST, PING): the agent and the dashboard both show them."""

from __future__ import annotations

from collections.abc import Iterable

# skill -> what having it lets the router do
CAN_DO = {
    "CREATE_POST": "post and reply",
    "LIKE_POST": "like posts",
    "DELETE_POST": "delete your posts",
    "GET_NOTIFICATIONS": "read your notifications",
    "GET_PROFILE": "read your profile",
    "GET_POST_METRICS": "count a post's likes and replies",
    "SEARCH_POSTS": "search posts",
    "FETCH_POST": "read a post and its thread",
    "MOLTBOOK_FEED": "read the Moltbook feed",
    "MOLTBOOK_COMMENT": "comment on Moltbook",
    "AUTH_TEST": "check your logins",
    "NOTE": "keep notes in its own notebook",
    "PING": "answer that it is there",
}
# skill -> the verb it adds to the one short line of `status`; the router's own checks add none
VERBS = {
    "CREATE_POST": "post", "MOLTBOOK_COMMENT": "reply", "LIKE_POST": "like", "DELETE_POST": "delete",
    "GET_NOTIFICATIONS": "read", "GET_PROFILE": "read", "GET_POST_METRICS": "read", "FETCH_POST": "read",
    "MOLTBOOK_FEED": "read", "SEARCH_POSTS": "search", "AUTH_TEST": "", "NOTE": "", "PING": "",
}
VERB_ORDER = ("post", "reply", "like", "delete", "read", "search")
# skill -> (what asking for it is, what it is once done), for the activity list
ACTIVITY = {
    "PING": ("check that the router answers", "Checked that the router answers"),
    "NOTE": ("write a note in the router's notebook", "Wrote a note in the router's notebook"),
    "AUTH_TEST": ("check a login", "Checked a login"),
}


def in_words(skill: str) -> str:
    """A skill with no words of its own, readable: MOLTBOOK_FEED -> "moltbook feed"."""
    return skill.strip("_").lower().replace("_", " ")


def can_do(skills: Iterable[object]) -> str:
    """"post and reply, like posts and check your logins": known ones in CAN_DO's order, then the rest."""
    names = {str(skill) for skill in skills}
    words = [CAN_DO[name] for name in CAN_DO if name in names]
    words += sorted(in_words(name) for name in names - set(CAN_DO))
    if not words:
        return "only answer checks" if names else "nothing yet (no skill installed)"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def verbs(skills: Iterable[object]) -> str:
    """"post, reply, like, delete, read and search": what a router can do in a few verbs, for a line
    read at a glance (a post is also how it replies); a skill with no verb of its own is named."""
    names = {str(skill) for skill in skills}
    said = {VERBS[name] for name in names if name in VERBS} | ({"reply"} if "CREATE_POST" in names else set())
    words = [verb for verb in VERB_ORDER if verb in said]
    words += sorted(in_words(name) for name in names - set(VERBS))
    if not words:
        return "only answer checks" if names else "nothing yet (no skill installed)"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
