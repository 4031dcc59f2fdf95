"""Every reason a command waits for the owner, from every sender, reads as a sentence a person
would say: no raw param names, no nested parentheses, numbers and nouns that agree, and who asked
named as they are (an MCP client's post is never "your post")."""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path

import pytest

from agent.commands.describe import WORDS, the_thing
from protocol.hold_reasons import HoldReason, Sender, Why, field_noun, sentence

REPO = Path(__file__).resolve().parents[2]
AUTHOR = "@bob.bsky.social"


def param_names() -> list[str]:
    """Every param any router action takes, from the catalogue the router enforces."""
    actions = json.loads((REPO / "workspace" / "router_actions.json").read_text(encoding="utf-8"))
    return sorted({name for a in actions for name in a["params"].get("properties", {})} - {"platform"})


PARAMS = param_names()
FIELD_SETS = [(name,) for name in PARAMS] + list(combinations(["text", "url", "post_id"], 2)) + [
    ("text", "title", "url")]
READINGS = [(), ("_BROWSER_VISION https://news.example/a (a page)",),
            tuple(f"source {i} (a feed)" for i in range(7))]
LINKS = [("https://scam.example",), ("https://a.example", "@c.example", "https://d.example")]


def reasons(why: Why, sender: Sender):
    for fields in FIELD_SETS:
        for read in READINGS:
            for links in LINKS:
                yield HoldReason(
                    why, sender, fields=fields, read=read, links=links,
                    holds=("your memory 'bank_pin'",), author=AUTHOR if sender == Sender.STRANGER else "",
                    via="autonomy" if sender == Sender.AUTONOMY else "telegram",
                    detail="it holds a base64 run that decodes to text",
                )


def deepest_parentheses(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def raw_names_in(text: str) -> list[str]:
    """Param names written as such: `post_id`, `url`; a name that is a plain word and says what
    it is ("the text") is not one."""
    return [name for name in PARAMS
            if field_noun(name) != f"the {name}" and re.search(rf"(?<![\w/.:@]){re.escape(name)}(?!\w)", text)]


AGREEMENT = [
    (re.compile(r"\(s\)"), "a plural hedged with (s)"),
    (re.compile(r"\b1 \w+s\b"), "one of a plural noun"),
    (re.compile(r"\b(?:[02-9]|\d{2,}) (?:outside )?(?:source|link|character)\b"), "many of a singular noun"),
    (re.compile(r"\ba [aeiouAEIOU]"), "'a' before a vowel"),
    (re.compile(r"\ban (?!MCP)[^aeiouAEIOU\s]"), "'an' before a consonant"),
]


@pytest.mark.parametrize("sender", list(Sender))
@pytest.mark.parametrize("why", list(Why))
def test_every_reason_from_every_sender_is_a_sentence(why, sender):
    for reason in reasons(why, sender):
        said = sentence(reason)
        assert said[:1].isupper() and said.endswith("."), said
        assert raw_names_in(said) == [], said
        assert deepest_parentheses(said) <= 1, said
        assert [what for pattern, what in AGREEMENT if pattern.search(said)] == [], said
        if len(reason.links) > 1 and why == Why.STRANGER_LINKS:
            assert "links or handles" in said, said
        if why in (Why.NOT_OWNER_WORDS, Why.MAY_HIDE_SECRET):
            assert all(field_noun(name).removeprefix("the ") in said or name == "post_id"
                       for name in reason.fields[:1]), said
        named = {
            Sender.OWNER: "" if not reason.read else "This turn had read",
            Sender.MCP: "An MCP client asked for this",
            Sender.AUTONOMY: "Autonomy asked for this",
            Sender.STRANGER: f"A turn {AUTHOR} wrote asked for this",
            Sender.UNKNOWN: "The command did not say who asked for it",
        }[sender]
        assert said.startswith(named), said
        if sender != Sender.MCP:
            assert "MCP client" not in said, said


def test_a_stored_reason_reads_back_as_itself():
    for why in Why:
        for sender in Sender:
            for reason in reasons(why, sender):
                assert HoldReason.from_dict(json.loads(json.dumps(reason.to_dict()))) == reason
    assert HoldReason.from_dict({"why": "no_such_reason", "sender": "owner"}) is None
    assert HoldReason.from_dict(None) is None


THINGS = [(action, reply) for action in sorted(WORDS) for reply in (False, True)]


@pytest.mark.parametrize("sender", list(Sender))
def test_a_held_command_is_named_by_who_asked_for_it(sender):
    why = HoldReason(Why.SCOPE, sender, author=AUTHOR if sender == Sender.STRANGER else "").to_dict()
    for action, reply in THINGS:
        named = the_thing(action, "bsky", reply, why)
        if sender in (Sender.OWNER, Sender.UNKNOWN):  # no origin: an owner's turn (protocol.origin)
            assert named.startswith(("your ", "the deletion of your ")), named
            continue
        # the owner's account stays theirs ("check your login"); what was asked for is not
        assert not re.search(r"\byour (?:\w+ )?(?:post|reply|like|request)\b", named), named
        assert named.startswith(("a ", "an ")), named
        asked = {Sender.MCP: "an MCP client asked for", Sender.AUTONOMY: "autonomy asked for",
                 Sender.STRANGER: f"a turn {AUTHOR} wrote"}
        assert asked[sender] in named, named
    if sender == Sender.MCP:
        assert the_thing("CREATE_POST", "bsky", False, why) == "a Bluesky post an MCP client asked for"


def test_a_notice_without_a_typed_reason_names_the_owners_own():
    assert the_thing("CREATE_POST", "bsky") == "your Bluesky post"
