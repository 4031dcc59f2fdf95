"""What a newcomer typed in the console walk of issue 31 that no one had scripted, answered as they
meant it. Before: "how do I connect my bluesky account?" and "what's trending on bluesky?" got "I
can't write a post for you"; "what is safeclaw?", "thnks" and "helo wat can u do" got "I can't do
that: the embedded model can't write texts…"; "what can you do?" left out the search it can do."""

from __future__ import annotations

import pytest

from agent.llm.local.replies import ABILITIES, chat_reply
from agent.llm.local.rules import keyword_rule

OFFERED = {"post", "notifications", "remember", "search", "profile", "chat", "who", "abilities", "recall",
           "refuse"}  # no URL in these messages: no like, delete, reply or open


@pytest.mark.parametrize("message", [
    "how do I connect my bluesky account?", "how do i add my mastodon account", "can I log in to bluesky?",
    "how to set up my twitter account", "where do I put my bluesky password?",
])
def test_connecting_an_account_says_where_its_login_goes(message):
    assert keyword_rule(message, OFFERED) in (None, "chat"), message
    reply = chat_reply(message)
    assert "router/.env" in reply and "write a post" not in reply and "can't do that" not in reply, reply
    assert "dry run" in reply, reply


def test_a_bluesky_login_is_named_with_an_app_password():
    reply = chat_reply("how do I connect my bluesky account?")
    assert "BSKY_HANDLE" in reply and "app password" in reply, reply


@pytest.mark.parametrize("message", ["what's trending on bluesky?", "what is popular on mastodon today?"])
def test_what_is_trending_points_at_the_search(message):
    reply = chat_reply(message)
    assert "search bluesky for" in reply and "write a post" not in reply, reply


@pytest.mark.parametrize("message", ["what is safeclaw?", "what's SafeClaw", "what is this?"])
def test_what_safeclaw_is_is_who_it_is(message):
    assert keyword_rule(message, OFFERED) == "who", message


@pytest.mark.parametrize("message", ["thnks", "thanx!", "thnx", "ty", "thank u"])
def test_thanks_misspelt_is_still_thanks(message):
    assert keyword_rule(message, OFFERED) == "chat", message
    assert chat_reply(message).startswith("You're welcome!"), message


@pytest.mark.parametrize("message", ["helo wat can u do", "what can u do?", "wat do you do"])
def test_what_can_you_do_misspelt_is_still_asked(message):
    assert keyword_rule(message, OFFERED) == "abilities", message


def test_what_it_can_do_names_the_search():
    assert "search" in ABILITIES, ABILITIES


def test_a_reply_saying_its_words_after_the_link_is_a_reply():
    """The walk: "reply to <link> saying congrats!" got "To reply I need the post's link and your
    words", though it had both."""
    from agent.llm.local.message_values import given_texts

    message = "reply to https://bsky.app/profile/alice.bsky.social/post/3kxyzabc saying congrats!"
    assert given_texts(message) == ["congrats!"]
    assert given_texts("post saying hello on bluesky") == []  # no link before it: not a text given
    assert keyword_rule(message, OFFERED | {"reply"}) == "reply"


def test_a_reply_without_its_words_says_how_to_give_them():
    reply = chat_reply("reply to https://bsky.app/profile/alice.bsky.social/post/3kxyzabc")
    assert 'in quotes' in reply and "/reply <post URL> <text>" in reply, reply


@pytest.mark.parametrize("message", ["can you see my password?", "do you know my bluesky password?",
                                     "do you store my passwords"])
def test_whether_it_sees_the_passwords_is_answered(message):
    assert keyword_rule(message, OFFERED) in (None, "chat"), message
    reply = chat_reply(message)
    assert reply.startswith("No: I never see your passwords") and "router/.env" in reply, reply
