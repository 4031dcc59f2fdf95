"""A write on someone else's post is the router's to refuse, not the platform's: DELETE_POST of a
post the account did not write is refused before anything is sent, on every platform (a platform
lets an account that moderates delete others' posts), and the account's own post is deleted.
The skill as the router runs it (plan, then run), the official SDKs against the fakes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from protocol.commands import CommandEnvelope
from protocol.replies import Reply
from router.config.settings import RouterSettings
from router.pipeline import Pipeline, Planned
from router.policy.checks import Policy
from router.redaction import Redactor
from router.registry import SkillContext, discover_skills
from tests.router.platform_cases import ACCOUNTS, Account

SKILLS = discover_skills()


@pytest.fixture(params=sorted(ACCOUNTS))
def account(request) -> Iterator[Account]:
    made = ACCOUNTS[request.param]()
    yield made
    made.fake.stop()


def delete(account: Account, post_id: str, tmp_path) -> Reply:
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:pw@127.0.0.1:1/0"})
    redactor = Redactor([])
    pipeline = Pipeline(SKILLS, Policy(settings, SKILLS, redactor), redactor)
    envelope = CommandEnvelope.new("DELETE_POST", {"platform": account.platform, "post_id": post_id}, "t",
                                   ttl_seconds=60)
    planned = pipeline.plan(envelope)
    assert isinstance(planned, Planned), planned
    ctx = SkillContext(command_id=envelope.id, conversation="t", credentials=account.credentials,
                       env=account.env, data_dir=tmp_path, timeout=10.0)
    return pipeline.run(planned, ctx).reply


def test_someone_elses_post_is_refused_and_still_there(account, tmp_path):
    reply = delete(account, account.other, tmp_path)
    assert (reply.status, reply.error) == ("error", "invalid_params"), reply
    assert "own posts" in reply.message and "nothing was sent" in reply.message
    assert account.writes() == [], "a delete of someone else's post was sent"
    assert account.exists(account.other)


def test_the_accounts_own_post_is_deleted(account, tmp_path):
    reply = delete(account, account.own, tmp_path)
    assert reply.status == "ok", reply
    assert not account.exists(account.own)
    assert account.exists(account.other)
