"""The explainer's reads go the production way in these tests: RouterClient → real redis-server →
router Worker (FETCH_POST, SEARCH_POSTS) → the fake AppView."""

import pytest

from evals.stack import EvalStack
from tests.support.fake_bsky import FakeBluesky


@pytest.fixture(scope="module")
def appview():
    fake = FakeBluesky()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def router(appview, tmp_path_factory):
    with EvalStack(tmp_path_factory.mktemp("stack"), appview.url) as client:
        yield client


@pytest.fixture
def bsky(appview):
    appview.clear()
    appview.requests.clear()
    return appview
