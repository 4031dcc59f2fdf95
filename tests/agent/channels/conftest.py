"""Fixtures shared by the channels' tests."""

from __future__ import annotations

import pytest

from tests.support.fake_jetstream import FakeJetstream


@pytest.fixture
def jetstream():
    """A local Jetstream (the Bluesky firehose's websocket) the listener connects to."""
    with FakeJetstream() as server:
        yield server
