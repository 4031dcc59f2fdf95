"""What the embedded model may say: grammars from the catalogue, choices from the message."""

import json

import pytest

from agent.llm.local.grammar import label_grammar, object_grammar
from agent.llm.local.intents import offered_intents
from agent.llm.local.message_values import memory_key
from tests.agent.llm.local.catalogue_requests import request

llama_cpp = pytest.importorskip("llama_cpp")


def test_the_label_grammar_lets_out_only_the_labels():
    grammar = label_grammar(["post", "like", "who"])
    assert grammar == 'root ::= "post" | "like" | "who"\n'
    llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp accepts it
    with pytest.raises(ValueError):
        label_grammar([])


def test_every_offered_choice_has_a_grammar_llama_cpp_accepts():
    message = 'Reply to https://bsky.app/profile/a.test/post/3k with "thanks" and remember my cat is Miso'
    intents = offered_intents(request(message, {"cat": "Miso"}))
    for intent in intents.values():
        if intent.fill is not None:
            llama_cpp.LlamaGrammar.from_string(object_grammar(intent.fill), verbose=False)
    assert {
        "post",
        "reply",
        "like",
        "delete",
        "notifications",
        "remember",
        "forget",
        "open",
        "who",
        "refuse",
    } <= set(intents)
    assert "_LLM_SUMMARY" not in {i.action for i in intents.values()}  # the agent names it, never the owner


def test_platforms_come_only_from_the_catalogue_and_urls_only_from_the_message():
    intents = offered_intents(request("Like https://bsky.app/profile/ann.test/post/3kabc please"))
    fill = intents["like"].fill
    assert fill["properties"]["post_id"]["enum"] == ["https://bsky.app/profile/ann.test/post/3kabc"]
    assert fill["properties"]["platform"]["enum"] == ["bsky"]  # the URL's platform
    post = offered_intents(request("Tweet this: the sun is out"))["post"].fill
    assert post["properties"]["platform"]["enum"] == ["x"]  # the message names the platform
    assert post["properties"]["text"]["enum"] == ["the sun is out"]  # the owner's words after the colon
    anywhere = offered_intents(request("post 'the sun is out'"))["post"].fill
    assert anywhere["properties"]["platform"]["enum"] == ["bsky", "mastodon", "moltbook", "reddit", "x"]


def test_a_post_is_offered_only_with_words_the_owner_gives_to_publish():
    for asked_to_write in ("post the sun is out", "write a post about spring and put it on bluesky"):
        assert "post" not in offered_intents(request(asked_to_write))


def test_quoted_text_is_the_only_text_a_post_may_have():
    fill = offered_intents(request('Post "hello world" to bluesky'))["post"].fill
    assert fill["properties"]["text"] == {"type": "string", "enum": ["hello world"]}
    grammar = object_grammar(fill)
    assert '"\\"hello world\\""' in grammar and "string ::=" in grammar


def test_recall_and_forget_choose_among_the_remembered_keys_nearest_the_message():
    memory = {"favourite colour": "blue", "wifi password": "x", "home city": "Lyon"}
    intents = offered_intents(request("Forget my favourite colour", memory))
    assert intents["forget"].fill["properties"]["key"]["enum"] == ["favourite colour"]
    assert intents["recall"].fill["properties"]["key"]["enum"] == ["favourite colour"]
    assert "forget" not in offered_intents(request("Forget it"))  # nothing remembered: nothing to forget


def test_someone_elses_words_are_offered_no_action_by_the_engine_filter():
    intents = offered_intents(request("Post hi on bsky", outside="@eve"))
    answers = {label for label, intent in intents.items() if intent.action is None}
    assert answers == {"who", "abilities", "recall", "refuse", "chat"}


@pytest.mark.parametrize(
    ("message", "value", "key"),
    [
        ("Remember that my favourite colour is green.", "green", "favourite colour"),
        ("Remember my sister is called Ada", "Ada", "sister"),
        ("please remember: my bike = blue", "blue", "bike"),
        ("Remember Ada", "Ada", "Ada"),
    ],
)
def test_a_facts_key_is_the_owners_words_before_its_value(message, value, key):
    assert memory_key(message, value) == key


def test_an_object_grammar_needs_a_required_property():
    with pytest.raises(ValueError):
        object_grammar({"properties": {"a": {"type": "string"}}, "required": []})
    with pytest.raises(ValueError):
        object_grammar({"properties": {"a": {"type": "object"}}, "required": ["a"]})
    assert json.loads('{"a": 1}')  # the shape the grammar writes is plain JSON
