"""The attack tests of information flow run on the whose-words stack: the agent's loop with a model
that obeys what it reads, its real RouterClient, a real redis-server, a real router Worker, and
the Bluesky and Mastodon fakes."""

from tests.agent.actions.conftest import chromium  # noqa: F401
from tests.agent.test_whose_words import control, fakes, stack  # noqa: F401
