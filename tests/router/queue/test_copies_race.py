"""Copies of one command racing through several router processes on one real redis-server: the
copy that wins the claim is the only one that takes the bounds (`router.queue.claim_step`), so
each command is published exactly once and no copy's share refuses the winner (before, a winner
saw its losers' texts in the duplicate guard and refused itself as `duplicate_content`)."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from protocol.commands import CommandEnvelope
from tests.router.router_helpers import OWNER_TURN, RouterProcess, reply_of, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon

ROUTERS, COMMANDS, COPIES, ROUNDS = 3, 6, 8, 6
WORDS = ("river", "stone", "lantern", "orchard", "meadow", "harbor", "violet", "ember", "quiet", "window",
         "garden", "copper", "thunder", "silver", "morning", "paper", "candle", "forest", "winter", "summer")


@pytest.fixture
def mastodon():
    fake = FakeMastodon(token="race-" + "mastodon-token-4321").start()
    yield fake
    fake.stop()


def words(rng: random.Random) -> str:
    """A text unlike any other of the run (a hex run could be held as a possible secret)."""
    return "copies race: " + " ".join(rng.choice(WORDS) for _ in range(18))


def published(mastodon: FakeMastodon, text: str) -> int:
    return sum(r.form().get("status") == text for r in mastodon.posts())


# With a rate limit on the scope the claim is taken in the policy's own round trip, with the
# rate limit's counter and the bounds; without, in the reads' round trip with the bounds.
@pytest.mark.slow
@pytest.mark.parametrize("rate_limits", ["", "mastodon:post=1000/60"])
def test_copies_of_a_command_across_routers_publish_it_exactly_once(redis_urls, tmp_path, mastodon, rate_limits):
    keys, admin, rng = redis_urls.keys, redis_urls.admin_client(), random.Random(uuid.uuid4().int)
    env = {"MASTODON_TOKEN": mastodon.token, "MASTODON_INSTANCE": mastodon.url,
           "ROUTER_QUOTAS": "mastodon:post=1000", "ROUTER_RATE_LIMITS": rate_limits}
    names = [f"r{i}" for i in range(ROUTERS)]
    routers = [RouterProcess(router_env(redis_urls.router_url, tmp_path, name, **env)) for name in names]
    try:
        wait_until(lambda: all(admin.exists(keys.router_heartbeat(n)) for n in names), "the routers")
        for _ in range(ROUNDS):
            commands = [CommandEnvelope.new("CREATE_POST", {"platform": "mastodon", "text": words(rng)}, "t",
                                            ttl_seconds=120, origin=OWNER_TURN) for _ in range(COMMANDS)]
            copies = [command.to_json() for command in commands for _ in range(COPIES)]
            rng.shuffle(copies)
            admin.lpush(keys.command_queue, *copies)  # all at once: the routers take them in batches
            first = {c.id: reply_of(admin, keys, c.id) for c in commands}
            wait_until(lambda: not admin.llen(keys.command_queue)
                       and not any(admin.llen(keys.processing(n)) for n in names), "every copy handled")
            for command in commands:
                replies = [first[command.id]] + [json.loads(r) for r in admin.lrange(keys.response(command.id), 0, -1)]
                answers = {(r["status"], r.get("error")) for r in replies}
                assert published(mastodon, command.params["text"]) == 1, (command.id, answers)
                assert answers == {("ok", None)}, (command.id, replies)  # copies: the stored reply again
                assert len({json.dumps(r["result"], sort_keys=True) for r in replies}) == 1, replies
                assert published(mastodon, command.params["text"]) == 1, command.id
                admin.delete(keys.response(command.id))
    finally:
        for router in routers:
            router.stop()
        admin.close()
