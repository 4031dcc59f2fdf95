"""The last LLM call's outcome reaches the agent's heartbeat (the dashboard's LLM light)."""

import json

import pytest

from agent.status.heartbeat import AgentHeartbeat
from protocol.keys import Keys
from tests.agent.cost.test_budget import guarded


def test_heartbeat_carries_the_last_calls_outcome(tmp_path):
    llm, _inner, _, _, _ = guarded(tmp_path, ["ok"], daily=100.0)
    beat = AgentHeartbeat(None, Keys(), {"llm_provider": "scripted"}, llm=llm)
    assert "llm" not in json.loads(beat.value())  # no call yet: the dashboard shows yellow
    llm.chat("hello")
    assert json.loads(beat.value())["llm"]["ok"] is True
    with pytest.raises(Exception):  # noqa: B017 - the scripted model has no reply left
        llm.chat("again")
    health = json.loads(beat.value())["llm"]
    assert health["ok"] is False and health["error"]
