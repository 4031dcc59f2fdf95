"""What the owner says about themselves, as a person would say it: "my name is Dana", "call me
Sam", "I live in Porto". The embedded model stores such a statement as a fact (the owner's own
words in the owner's turn), and a question that asks it back ("where do I live?", "what's my
name?") finds the fact whatever key it was stored under ("city", "where I live", "name").
"""

from __future__ import annotations

import re

VALUE = r"(?P<value>[^?]{1,120}?)"
END = r"[\s.!]*$"
# (pattern, the key the fact is stored under; None: the owner's own words before "is")
STATEMENTS: list[tuple[re.Pattern[str], str | None]] = [
    (re.compile(r"^\W*(?:call me|i'?m called|i am called|my name'?s|my name is)\s+" + VALUE + END, re.I),
     "name"),
    (re.compile(r"^\W*i (?:live|stay) in\s+" + VALUE + END, re.I), "where I live"),
    (re.compile(r"^\W*i(?:'m| am) from\s+" + VALUE + END, re.I), "where I am from"),
    (re.compile(r"^\W*i(?:'m| am) (?P<value>\d{1,3}) years? old" + END, re.I), "age"),
    (re.compile(r"^\W*my\s+(?P<key>[\w' -]{1,40}?)\s+(?:is called|is named|are called|is|are)\s+"
                + VALUE + END, re.I), None),
]
# A word of a question, and the keys a fact it asks about is often stored under.
KIN_KEYS: dict[str, tuple[str, ...]] = {
    "live": ("city", "town", "home", "hometown", "address", "country", "where I live"),
    "from": ("hometown", "country", "where I am from"),
    "name": ("name",),
    "called": ("name",),
    "old": ("age", "birthday"),
    "age": ("age", "birthday"),
    "born": ("birthday", "birthplace"),
}


# "remember (that) my favourite food is ramen": the statement after the ask to remember it.
REMEMBER_THAT = re.compile(r"^\W*(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[:,]?\s+", re.I)


def statement_about_me(message: str) -> tuple[str, str] | None:
    """(key, value) when the whole message states a fact about the owner, asked to be remembered
    or not; None for a question, a request or anything longer."""
    asked = REMEMBER_THAT.sub("", message, count=1)
    return stated(message) or (stated(asked) if asked != message else None)


def stated(message: str) -> tuple[str, str] | None:
    for pattern, key in STATEMENTS:
        found = pattern.match(message)
        if found:
            value = found.group("value").strip(" \"'“”")
            if value:
                return (key or found.group("key").strip()), value
    return None


def kin_keys(words: set[str]) -> set[str]:
    """The key words a question's words point at ("live" → "city", "home", …), lower-cased."""
    return {part.lower() for word in words for key in KIN_KEYS.get(word.lower(), ()) for part in key.split()}
