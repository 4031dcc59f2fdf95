"""The attack tests of information flow run on the whose-words stack: the agent's loop with a model
that obeys what it reads, its real RouterClient, a real redis-server, a real router Worker, and
the Bluesky and Mastodon fakes; the attacker's web server logs what each attack would have got."""

import pytest

from tests.agent.actions.conftest import chromium  # noqa: F401
from tests.agent.flow.attacker import AttackerServer
from tests.agent.test_whose_words import control, fakes, stack  # noqa: F401


@pytest.fixture
def attacker():
    server = AttackerServer().start()
    yield server
    server.stop()
