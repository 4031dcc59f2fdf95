"""Offline, "search bluesky for cats" said "Could not search posts on Bluesky: could not reach Bluesky
for the search", as if Bluesky were at fault: a platform call that fails because this machine has no
network says so, as /browse does (issue 31)."""

from __future__ import annotations

import socket

import pytest

from agent.commands.describe import describe_one
from protocol import reach
from router.errors import SkillError
from router.registry import SkillContext
from router.skills.search_posts.skill import SKILL as SEARCH_POSTS


@pytest.fixture
def no_name_resolves(monkeypatch):
    def lookup(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)


def search_failure(tmp_path) -> str:
    ctx = SkillContext(command_id="c1", conversation="test", credentials={},
                       env={"BSKY_APPVIEW": "https://appview.example"}, data_dir=tmp_path, dry_run=False,
                       timeout=2.0)
    with pytest.raises(SkillError) as failed:
        SEARCH_POSTS.run({"platform": "bsky", "query": "cats"}, ctx)
    assert failed.value.kind == "request_failed"
    return failed.value.message


def told(message: str) -> str:
    return describe_one({"action": "SEARCH_POSTS", "status": "error", "error": message,
                         "params": {"platform": "bsky", "query": "cats"}})


def test_a_search_on_a_machine_with_no_network_says_so(tmp_path, no_name_resolves, monkeypatch):
    monkeypatch.setattr(reach, "has_route", lambda: False)
    reply = told(search_failure(tmp_path))
    assert reply == "Could not search posts on Bluesky: this machine has no network connection, so Bluesky " \
                    "cannot be reached", reply


def test_a_search_whose_address_cannot_be_looked_up_asks_whether_the_machine_is_online(
    tmp_path, no_name_resolves, monkeypatch
):
    monkeypatch.setattr(reach, "has_route", lambda: True)
    reply = told(search_failure(tmp_path))
    assert reply.startswith("Could not search posts on Bluesky: Bluesky cannot be reached: its address could "
                            "not be looked up"), reply
    assert "is this machine online?" in reply and "Errno" not in reply, reply


def test_a_refused_connection_still_names_the_platform():
    from router.platforms.http_errors import error_from_exception

    refused = error_from_exception(ConnectionRefusedError(111, "refused"), "bsky", "post fetch")
    assert refused.message == "could not reach Bluesky for the post fetch", refused.message
