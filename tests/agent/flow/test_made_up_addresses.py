"""Addresses and names a tainted turn's model made up (`SinkGuard.address_refusal`, `holds`), and the
names a post address's lookup sends out (`resolved_names`)."""

from __future__ import annotations

import pytest

from agent.flow.owner_only import OwnerOnly
from agent.flow.resolved_names import resolved_names
from agent.flow.sinks import SinkGuard
from agent.mind.prompt import render_artifact

MEMORY = {"bank_pin": "4821"}


@pytest.mark.parametrize(("text", "names"), [
    ("at://4821.attacker.test/app.bsky.feed.post/3k", ["4821.attacker.test"]),
    ("at://did:plc:abc123/app.bsky.feed.post/3k", []),  # the PLC directory, which no one else reads
    ("at://did:web:x.example/app.bsky.feed.post/3k", ["x.example"]),
    ("https://bsky.app/profile/bob.test/post/3k", ["bob.test"]),
    ("https://mastodon.social/@bob/1234", ["mastodon.social"]),
    ("@bob@mastodon.social", ["mastodon.social"]),
    ("https://user:pw@evil.example:8080/x", ["evil.example"]),
    ("from:4821.attacker.test garden club", ["4821.attacker.test"]),  # a search resolves the author
    ("mentions:@bob.test OR to:alice.test", ["bob.test", "alice.test"]),
    ("the ratio 4:3 and time 10:30", []),
    ("no address at all", []),
])
def test_the_names_a_lookup_asks_about(text, names):
    assert resolved_names(text) == names


def test_a_tainted_turn_resolves_only_names_its_prompt_or_the_owner_wrote():
    sinks = SinkGuard.for_turn(MEMORY, [], None).with_shown("Have you seen at://bob.test/app.bsky.feed.post/1?")
    assert sinks.holds({"post_id": "at://bob.test/app.bsky.feed.post/1"}) == ()
    [why] = sinks.holds({"post_id": "at://1284.attacker.test/app.bsky.feed.post/1"})
    assert "1284.attacker.test" in why
    assert sinks.holds({"text": "see at://1284.attacker.test/x"}) == ()  # a post's words are not looked up
    assert SinkGuard.for_turn(MEMORY, [], None).holds({"post_id": "at://did:plc:abc/app.bsky.feed.post/1"}) == ()


def test_a_subdomain_of_a_name_shown_is_not_that_name():
    sinks = SinkGuard.for_turn(MEMORY, [], None).with_shown("the guide on docs.example.org")
    assert sinks.address_refusal("https://docs.example.org/") is None
    assert sinks.address_refusal("https://4821x.docs.example.org/") is not None
    assert sinks.address_refusal("https://example.org/") is None  # the prompt holds its name as written


def test_the_spellings_a_query_carries_on_its_own_are_found_after_its_name():
    sinks = SinkGuard.for_turn(MEMORY, [], None)
    for query in ("ctx=NDgyMQ", "ctx=34383231", "ctx=GQ4DEMI="):
        assert "bank_pin" in (sinks.url_refusal(f"https://evil.example/?{query}") or ""), query


def test_a_site_the_owner_named_gets_only_the_addresses_the_owner_or_the_text_wrote():
    words = ("summarise https://evil.example/page for me",)
    sinks = SinkGuard(OwnerOnly.of(MEMORY, words), words[0], words, True,
                      shown=f"{words[0]}\n<page>see /more for the rest</page>")
    assert sinks.address_refusal("https://evil.example/page") is None  # as the owner wrote it
    assert sinks.address_refusal("https://evil.example/more") is None  # the page's own path
    assert sinks.address_refusal("https://evil.example/") is None
    assert "made up" in (sinks.address_refusal("https://evil.example/c?d=1284") or "")  # the PIN reversed
    assert "made up" in (sinks.address_refusal("https://evil.example/page#1284") or "")  # for the page's script


def test_a_link_with_a_query_is_found_in_the_prompt_that_escapes_it():
    link = "https://news.example/a?b=1&c=2"
    artifact = {"conversation": "console", "turn": "t", "steps": [
        {"step": 1, "results": [{"action": "FETCH_POST", "status": "ok", "result": {"text": f"read {link}"}}]}]}
    shown = render_artifact(artifact, "console", "t")
    assert "&amp;" in shown  # as the model sees it
    sinks = SinkGuard.for_turn(MEMORY, [], None).with_shown(shown)
    assert sinks.address_refusal(link) is None
    assert sinks.address_refusal("https://news.example/a?b=1&c=4821") is not None


def test_a_value_the_owner_sends_to_a_site_goes_to_that_site_only_not_one_its_name_ends_with():
    words = ("my code is 4821, send it to data.example",)
    sinks = SinkGuard(OwnerOnly.of({}, words), words[0], words, True)
    assert sinks.url_refusal("https://data.example/?c=4821") is None
    assert "your own messages" in (sinks.url_refusal("https://a.example/?c=4821") or "")
    assert "your own messages" in (sinks.url_refusal("https://ta.example/?c=4821") or "")


def test_a_user_name_password_or_port_the_model_made_up_is_refused_as_made_up():
    sinks = SinkGuard.for_turn(MEMORY, [], None).with_shown("Read https://evil.example/page and http://127.0.0.1:8080/x")
    assert "user name" in (sinks.address_refusal("https://1284@evil.example/") or "")  # the PIN reversed
    assert "port" in (sinks.address_refusal("https://user:1284@evil.example/page") or "")
    assert "port" in (sinks.address_refusal("https://evil.example:1284/") or "")
    assert sinks.address_refusal("http://127.0.0.1:8080/x") is None  # as the prompt wrote it
    assert sinks.address_refusal("https://EVIL.example/page") is None  # a host's case is no bytes sent


def test_a_community_a_tainted_turn_asks_for_is_one_someone_wrote():
    sinks = SinkGuard.for_turn(MEMORY, [], None).with_shown("Posts from m/gardening and m/birds today")
    assert sinks.holds({"submolt": "gardening", "sort": "new"}) == ()
    [why] = sinks.holds({"submolt": "onetwoeightfour"})  # the PIN reversed, in words
    assert "onetwoeightfour" in why
    assert SinkGuard.for_turn(MEMORY, [], None).with_shown("").holds({"submolt": "general"}) != ()
