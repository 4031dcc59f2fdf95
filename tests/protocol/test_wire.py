"""The wire: a poison message is a ProtocolError (dead-lettered), never a crash of the reader."""

import json

import pytest

from protocol.commands import CommandEnvelope
from protocol.replies import Reply
from protocol.wire import ProtocolError

GOOD = {"id": "c1", "action": "PING", "params": {}, "conversation": "console",
        "created_at": 1.0, "expires_at": 2.0, "v": 1}


def command(**changes):
    return json.dumps({**GOOD, **changes}).replace('"__NaN__"', "NaN").replace('"__Inf__"', "Infinity")


def test_a_good_command_round_trips():
    envelope = CommandEnvelope.new("PING", {"x": 1}, "console", ttl_seconds=5)
    assert CommandEnvelope.from_json(envelope.to_json()) == envelope


@pytest.mark.parametrize("raw", [
    "[" * 100_000 + "]" * 100_000,  # nested past the recursion limit
    '{"id": "c1", "params": ' + "[" * 100_000 + "]" * 100_000 + "}",
])
def test_deeply_nested_json_is_a_protocol_error(raw):
    with pytest.raises(ProtocolError):
        CommandEnvelope.from_json(raw)
    with pytest.raises(ProtocolError):
        Reply.from_json(raw)


@pytest.mark.parametrize("changes", [
    {"v": "__Inf__"},
    {"expires_at": "__NaN__"},  # NaN > now is never true: it would never expire
    {"expires_at": "__Inf__"},
    {"created_at": "__NaN__"},
])
def test_non_finite_numbers_are_a_protocol_error(changes):
    with pytest.raises(ProtocolError):
        CommandEnvelope.from_json(command(**changes))
