"""A post's round trips to a real redis-server: the reads before the policy (the command's record,
its intent, the kill switch) and the claim's script taking the bounds, in one; and what must not change with
them: a stored reply answers a repeat unrun, the claim excludes a second runner, a refusal by the
bounds gives the claim back, the kill switch is read for each command."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from protocol.commands import CommandEnvelope
from protocol.keys import AGENT_LOGIN
from router.pipeline import Planned
from router.policy import kill_switch
from router.queue.command_run import CommandRun
from router.queue.worker import Worker
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN, settings_for
from tests.support.fake_bsky import FakeBluesky

BSKY_PASSWORD = "round-trips-" + "pass-5678"


@pytest.fixture
def bsky():
    server = FakeBluesky(password=BSKY_PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def worker(redis_urls, tmp_path, bsky):
    """A worker not running its loop: the test hands it commands one by one."""
    from router.app import build_worker

    env = {"BSKY_HANDLE": bsky.handle, "BSKY_PASSWORD": BSKY_PASSWORD, "BSKY_SERVICE": bsky.url,
           "BSKY_APPVIEW": bsky.url, "ROUTER_QUOTAS": "bsky:post=3"}
    settings = settings_for(redis_urls.router_url, tmp_path, **env)
    built = build_worker(settings, discover_skills(), {"BSKY_HANDLE": bsky.handle, "BSKY_PASSWORD": BSKY_PASSWORD})
    yield built
    built.conn.close()
    built.audit.close()


def round_trips(conn) -> list[list[str]]:
    """The commands of each round trip to Redis from now on (a pipeline is one)."""
    sent: list[list[str]] = []
    real_pipeline, real_command = conn.pipeline, conn.execute_command

    def pipeline(*args, **kwargs):
        pipe = real_pipeline(*args, **kwargs)
        execute = pipe.execute

        def counted(**options):
            sent.append([str(command[0][0]) for command in pipe.command_stack])
            return execute(**options)

        pipe.execute = counted
        return pipe

    def command(*args, **options):
        sent.append([str(args[0])])
        return real_command(*args, **options)

    conn.pipeline, conn.execute_command = pipeline, command
    return sent


def post(text: str, intent: str = "") -> CommandEnvelope:
    return CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": text}, "t", ttl_seconds=60,
                               intent=intent, origin=OWNER_TURN)


def decide(worker: Worker, envelope: CommandEnvelope):
    planned = worker.pipeline.plan(envelope)
    assert isinstance(planned, Planned)
    raw = envelope.to_json().encode()
    agent_queue = worker.taker(AGENT_LOGIN)
    reply, record = agent_queue.decider.decide(CommandRun(raw, envelope, planned))
    if reply is not None:
        agent_queue.results.finish(raw, reply, record)
    return reply


def posts(bsky: FakeBluesky) -> int:
    return len([w for w in bsky.writes() if w["collection"] == "app.bsky.feed.post"])


WORDS = ("river", "stone", "lantern", "orchard", "meadow", "harbor", "violet", "ember", "quiet", "window",
         "garden", "copper", "thunder", "silver", "morning", "paper", "candle", "forest", "winter", "summer",
         "autumn", "bridge", "shadow", "echo")


def fresh() -> str:
    """A text of words (a hex run could be held as a possible secret), unlike any other."""
    rng = random.Random(uuid.uuid4().int)
    return "a thought of its own: " + " ".join(rng.choice(WORDS) for _ in range(16))


def test_a_post_is_checked_and_claimed_in_one_round_trip(worker, bsky):
    first = decide(worker, post(fresh()))
    assert first.status == "ok", first  # warm-up: the guard's history, the login
    sent = round_trips(worker.conn)
    for intent in ("", "turn-1:create-post"):
        envelope = post(fresh(), intent)
        reads = ["GET", "GET"] + (["GET"] if intent else []) + ["GET"]  # record, fingerprint, intent, switch
        before = used(worker)
        sent.clear()
        run = CommandRun(b"{}", envelope, worker.pipeline.plan(envelope))
        reply = worker.taker(AGENT_LOGIN).decider.decide(run)[0]
        assert reply is not None and reply.status == "ok"
        # The claim and the bounds (quota, duplicate guard) in one script, after the reads.
        assert sent[0] == [*reads, "EVALSHA"], sent
        # The intent's own SET NX, then the last moment's read of the kill switch before the write.
        assert sent[1:] == ([["SET"]] if intent else []) + [["GET"]], sent
        assert used(worker) == before + 1
    assert posts(bsky) == 3


def test_a_command_held_for_the_owner_takes_the_bounds_only_when_it_runs(worker, bsky, admin):
    """A held command's checks keep their order: nothing is counted for it while it waits."""
    from protocol.origin import OWNER, Origin

    held = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": fresh()}, "t", ttl_seconds=60,
                               origin=Origin(OWNER, "console", hold_writes=True))
    reply = decide(worker, held)
    assert reply.status == "pending_approval", reply
    assert used(worker) == 0 and posts(bsky) == 0
    assert not admin.exists(worker.keys.idempotency(held.id))


def used(worker: Worker) -> int:
    return worker.policy.bounds.status(worker.conn, worker.policy.clock())["quotas"]["bsky"]["post"]["used"]


def test_a_stored_reply_answers_a_repeat_unrun_and_a_refusal_gives_the_claim_back(worker, bsky, admin):
    keys = worker.keys
    first = post(fresh())
    answered = decide(worker, first)
    assert answered.status == "ok" and posts(bsky) == 1
    again = decide(worker, first)
    assert again is not None and again.to_dict() == answered.to_dict() and posts(bsky) == 1
    assert used(worker) == 1  # the repeat took nothing from the bounds
    assert decide(worker, post(fresh())).status == "ok"
    assert decide(worker, post(fresh())).status == "ok"
    over = post(fresh())
    refused = decide(worker, over)
    assert (refused.status, refused.error) == ("denied", "quota_exceeded")
    assert not admin.exists(keys.idempotency(over.id), keys.fingerprint(over.id))  # given back
    sent_again = decide(worker, over)  # checked again, not "interrupted"
    assert (sent_again.status, sent_again.error) == ("denied", "quota_exceeded")
    assert posts(bsky) == 3


def test_the_claim_still_excludes_a_second_runner(worker, bsky, admin, monkeypatch):
    envelope = post(fresh())
    other = json.dumps({"state": "started", "router_id": "r2", "ts": 0})
    admin.set(worker.keys.idempotency(envelope.id), other)
    real_queue = worker.records.queue_stored

    def read_before_the_other_claimed(pipe, envelope):  # our read sees no record: the other copy
        real_queue(pipe, post("never sent"))            # claims between our read and our claim

    monkeypatch.setattr(worker.records, "queue_stored", read_before_the_other_claimed)
    assert decide(worker, envelope) is None  # dropped: the other copy answers
    assert posts(bsky) == 0 and admin.get(worker.keys.idempotency(envelope.id)) == other


def test_the_kill_switch_is_read_for_each_command_and_its_refusal_spends_nothing(worker, bsky, admin):
    kill_switch.flip(admin, worker.keys, True, "the owner")
    words = fresh()
    refused = decide(worker, post(words))
    assert (refused.status, refused.error) == ("denied", "kill_switch")
    assert used(worker) == 0  # the quota unit taken in the same round trip came back
    assert not admin.exists(worker.keys.idempotency(refused.id))  # and the claim
    kill_switch.flip(admin, worker.keys, False, "the owner")
    assert decide(worker, post(words)).status == "ok"  # the same words: their text came back too
    assert used(worker) == 1
    kill_switch.flip(admin, worker.keys, True, "the owner")
    assert decide(worker, post(fresh())).error == "kill_switch"
    assert posts(bsky) == 1


def test_a_post_starts_no_thread_of_its_own(worker, bsky, monkeypatch):
    """Its wait in a lane and its run's deadline are entries in the router's one timer thread."""
    import threading

    assert decide(worker, post(fresh())).status == "ok"  # warm-up: the timer thread starts
    started: list[str] = []
    real_start = threading.Thread.start

    def counted(self):
        started.append(self.name)
        return real_start(self)

    monkeypatch.setattr(threading.Thread, "start", counted)
    for _ in range(2):  # the quota is 3
        assert decide(worker, post(fresh())).status == "ok"
    assert started == []
