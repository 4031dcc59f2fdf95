"""Plain things a newcomer says to the embedded model, answered as a person means them: the
weather is not a `like`, "where do I live?" finds the city, "my name is Dana" is remembered.

Before: "what's the weather like today?" got the like command's help, "where do I live?" after
`/remember city = Lisbon` got "I don't remember that", "my name is Dana" got a lecture on how to
phrase it."""

import pytest

from agent.actions import local_actions
from agent.config.sections import LLMSettings
from agent.llm.local.about_me import statement_about_me
from agent.llm.local.llm import LocalLLM
from agent.llm.local.message_values import related_keys
from agent.llm.local.replies import cannot_reply
from agent.mind.loop import AgentLoop
from agent.workspace.memory import entry_value
from tests.agent.llm.local.test_local_turns_with_model import Recorder, needs_model


@pytest.mark.parametrize(("message", "fact"), [
    ("my name is Dana", ("name", "Dana")),
    ("My name's Dana.", ("name", "Dana")),
    ("call me Sam", ("name", "Sam")),
    ("I live in Porto", ("where I live", "Porto")),
    ("i'm from Lyon!", ("where I am from", "Lyon")),
    ("I am 34 years old", ("age", "34")),
    ("my dog is called Rex", ("dog", "Rex")),
])
def test_a_statement_about_the_owner_is_a_fact(message, fact):
    assert statement_about_me(message) == fact


@pytest.mark.parametrize("message", [
    "what is my name?", "my name is?", "where do I live?", "I like cats", "I live", "call me",
    "post 'my name is Dana' on bluesky", "hello",
])
def test_a_question_or_a_request_is_not_a_fact(message):
    assert statement_about_me(message) is None


@pytest.mark.parametrize(("question", "keys", "found"), [
    ("where do I live?", ["city", "dog"], ["city"]),
    ("where am I from?", ["hometown", "cat"], ["hometown"]),
    ("what's my name?", ["name", "city"], ["name"]),
    ("how old am I?", ["age", "city"], ["age"]),
    ("where do I live?", ["where I live"], ["where I live"]),
    ("where am I from?", ["where I live", "where I am from"], ["where I am from"]),
    ("where do I live?", ["where I live", "where I am from"], ["where I live"]),
])
def test_a_question_finds_the_key_its_fact_is_kept_under(question, keys, found):
    assert related_keys(keys, question) == found


@pytest.mark.parametrize("message", [
    "what's the weather like today?", "do you like pizza?", "I like cats", "what is it like in Lisbon?",
])
def test_like_as_a_word_is_not_the_like_command(message):
    assert "To like a post" not in cannot_reply(message)


@pytest.mark.parametrize("message", ["like this post please", "can you like that toot", "favourite the post"])
def test_a_like_asked_for_without_its_link_says_how(message):
    assert "To like a post I need its link" in cannot_reply(message)


def local_loop(workspace):
    router = Recorder()
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=300.0))
    return AgentLoop(workspace, llm, local_actions(), router), router


@pytest.mark.slow
@needs_model
def test_the_newcomers_plain_questions_through_real_turns(workspace):
    loop, router = local_loop(workspace)
    weather = loop.run_turn("console", "what's the weather like today?").reply
    assert "like a post" not in weather and "weather" in weather and router.calls == []

    workspace.merge_memory({"city": "Lisbon"}, "console")
    assert "Lisbon" in loop.run_turn("console", "where do I live?").reply

    told = loop.run_turn("console", "my name is Dana").reply
    assert "Dana" in told and "did not store" not in told
    assert entry_value(workspace.load_memory()["name"]) == "Dana"
    assert "Dana" in loop.run_turn("console", "what's my name?").reply
    assert router.calls == []  # nothing of it went to a platform


@pytest.mark.slow
@needs_model
def test_a_strangers_statement_is_not_remembered(workspace):
    loop, _ = local_loop(workspace)
    loop.run_turn("bsky:mention", "my name is Mallory", outside_author="mallory.example")
    assert "name" not in workspace.load_memory()
