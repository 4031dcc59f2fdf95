"""The live_url candidates are real post addresses, each marked unchecked, and none is used as a
live_url until someone has read it: --live stays refused until then."""

import json

from agent.explain.address import post_address
from evals.dataset import CATEGORIES, DEFAULT_DATASET, load_dataset

CANDIDATES = DEFAULT_DATASET.with_name("live_url_candidates.json")


def test_candidates_are_post_addresses_marked_unchecked_and_not_yet_used():
    candidates = json.loads(CANDIDATES.read_text())["candidates"]
    assert candidates and all(c["checked"] is False and c["category"] in CATEGORIES for c in candidates)
    assert all(post_address(c["url"]) == c["url"] for c in candidates)
    assert all(item.live_url is None for item in load_dataset())
