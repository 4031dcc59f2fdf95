"""What a newcomer typed in the console walk of issue 31 that no one had scripted, answered as they
meant it. Before: "how do I connect my bluesky account?" and "what's trending on bluesky?" got "I
can't write a post for you"; "what is safeclaw?", "thnks" and "helo wat can u do" got "I can't do
that: the embedded model can't write texts…"; "what can you do?" left out the search it can do."""

from __future__ import annotations

import re
from datetime import datetime

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


@pytest.mark.parametrize("message", ["what time is it?", "what's the date today", "what day is it",
                                     "hi, what time is it?", "What is the time now?"])
def test_the_time_is_told_from_the_machines_clock(message):
    """The walk of issue 31: "what time is it?" got "the embedded model can't … look things up"."""
    assert keyword_rule(message, OFFERED) == "chat", message
    reply = chat_reply(message)
    assert re.fullmatch(r"It is \d\d:\d\d on \w+day, \d{1,2} \w+ \d{4} \(this machine's clock\)\.", reply), reply


def test_the_clock_reply_names_day_date_and_time():
    from agent.llm.local.everyday import clock_reply

    assert clock_reply(datetime(2026, 12, 3, 9, 5)) == "It is 09:05 on Thursday, 3 December 2026 (this machine's clock)."


@pytest.mark.parametrize("message", ["remind me to call mum at 5", "set an alarm for 7am", "can you remind me tomorrow",
                                     "schedule a post for monday", "hey, remind me to water the plants"])
def test_a_reminder_is_said_to_be_out_of_reach_without_a_lecture(message):
    assert keyword_rule(message, OFFERED) == "chat", message
    reply = chat_reply(message)
    assert reply.startswith("I can't set reminders"), reply
    assert "write a post" not in reply and "Nothing was done." in reply, reply


@pytest.mark.parametrize(("message", "text", "platform"), [
    ("post hello world on bluesky", "hello world", "bsky"),
    ("please post good morning everyone to mastodon", "good morning everyone", "mastodon"),
    ("tweet coffee time on twitter", "coffee time", "x"),
])
def test_a_post_without_quotes_is_shown_how_to_send_exactly_those_words(message, text, platform):
    """The walk: "post hello world on bluesky" got "I can't write a post for you", although the owner
    gave the words; nothing is guessed: quotes say where the words start and end."""
    reply = chat_reply(message)
    assert f'put them in quotes: post "{text}" on' in reply and f"/post {platform} {text}" in reply, reply
    assert reply.endswith("Nothing was posted."), reply


@pytest.mark.parametrize("message", ["post something funny about mondays on bluesky",
                                     "post a joke on bluesky", "write me a post about cats"])
def test_a_post_to_be_written_keeps_the_kind_refusal(message):
    reply = chat_reply(message)
    assert reply.startswith("I can't write a post for you"), reply


@pytest.mark.parametrize("message", ["bye", "thanks, bye", "ok bye!", "goodbye", "thank you, see you"])
def test_a_goodbye_says_how_to_leave(message):
    assert keyword_rule(message, OFFERED) == "chat", message
    assert chat_reply(message).startswith("Bye! quit (or Ctrl-D) leaves the console"), message


def test_forgetting_what_is_not_remembered_says_so_first():
    reply = chat_reply("forget my shoe size")
    assert reply.startswith("I found no fact of that name to forget: /memory lists"), reply


def test_the_embedded_models_fixed_words_name_no_host():
    """In a turn that read outside text, a reply's hosts the owner did not write are shown as
    "[outside: …]": the fixed words named docs/llm.md, you.bsky.social and .env.example, and a newcomer
    saw their own setup help marked as a stranger's link."""
    from agent.llm.local import everyday, replies
    from protocol.link_hosts import link_keys

    fixed = [value for module in (replies, everyday) for name, value in vars(module).items()
             if isinstance(value, str) and not name.startswith("__")]
    fixed += [how for _, how in replies.NEEDS]
    fixed += [chat_reply(m) for m in ("post a joke on bluesky", "what is the weather?", "how do I connect bluesky?")]
    named = {text: link_keys(text) for text in fixed if link_keys(text)}
    assert named == {}, named


@pytest.mark.parametrize(("message", "fact"), [
    ("remember my favourite food is ramen", ("favourite food", "ramen")),
    ("please remember that my dog is called Rex", ("dog", "Rex")),
    ("remember: my name is Dana", ("name", "Dana")),
    ("note that I live in Porto", ("where I live", "Porto")),
])
def test_remember_a_statement_stores_its_value_not_the_verb(message, fact):
    """The fresh-clone walk: "remember my favourite food is ramen" was stored as favourite food = is."""
    from agent.llm.local.about_me import statement_about_me

    assert statement_about_me(message) == fact
    assert keyword_rule(message, OFFERED) == "remember", message


@pytest.mark.parametrize("message", ["why is it a dry run", "how do I turn off dry run?", "did that go out?",
                                     "was it really posted?"])
def test_the_dry_run_is_explained_when_asked(message):
    assert keyword_rule(message, OFFERED) == "chat", message
    reply = chat_reply(message)
    assert reply.startswith("/status says whether dry run is on") and "router/.env" in reply, reply


@pytest.mark.parametrize("message", ["stop posting", "please stop all posts", "where is the kill switch?"])
def test_stop_posting_says_the_owner_flips_the_kill_switch(message):
    """The walk: "stop posting" got "I can't do that: the embedded model can't write texts"."""
    assert keyword_rule(message, OFFERED) == "chat", message
    reply = chat_reply(message)
    assert "./safeclaw stop-posting" in reply and "resume-posting" in reply and "Nothing was done." in reply


@pytest.mark.parametrize("message", ['post "dry run test" on bluesky', 'post "the kill switch works" on bluesky'])
def test_quoted_words_about_the_dry_run_or_the_switch_are_still_a_post(message):
    assert keyword_rule(message, OFFERED) == "post", message


@pytest.mark.parametrize(("message", "host"), [("open example.com", "example.com"),
                                               ("summarize www.example.org/page", "www.example.org/page")])
def test_a_page_named_without_https_is_shown_back_whole(message, host):
    assert keyword_rule(message, OFFERED | {"open"}) == "chat", message
    assert chat_reply(message) == (f"To open a page I need its whole address: open https://{host} "
                                   f"(or /browse {host}). Nothing was done.")


@pytest.mark.parametrize("message", ["is my password safe?", "are my logins secure with you"])
def test_whether_the_passwords_are_safe_is_answered(message):
    assert chat_reply(message).startswith("Your passwords stay with the router: I never see them.")


@pytest.mark.parametrize("message", ["how do i use you", "how do I get started?", "how does this work?"])
def test_how_to_use_it_is_what_it_can_do(message):
    """The second fresh-clone walk: "how do i use you" got "I can't do that"."""
    assert keyword_rule(message, OFFERED) == "abilities", message


@pytest.mark.parametrize("message", ["is anything waiting for my approval?", "what needs approving"])
def test_what_waits_for_approval_points_at_approvals(message):
    assert keyword_rule(message, OFFERED) == "chat", message
    assert chat_reply(message).startswith("/approvals lists what waits for your decision"), message


@pytest.mark.parametrize("message", ["show me what you posted", "what did you post?", "list everything you did"])
def test_what_was_done_says_where_it_is_kept(message):
    assert keyword_rule(message, OFFERED) == "chat", message
    reply = chat_reply(message)
    assert reply.startswith("I keep no list of my own") and "dashboard" in reply, reply
