"""Every param of every command that writes, not only its `text`: a credential or secret-shaped
string in a title, a link, a reply target or any other field is refused as `secret_in_text`
before anything runs (a Reddit or Moltbook title, or a link, is published as surely as the text).

The property runs over the registry itself, so a write skill added later is covered too.
"""

import pytest

from protocol.commands import CommandEnvelope
from router.config.settings import RouterSettings
from router.pipeline import Pipeline, Planned
from router.policy.checks import Policy
from router.redaction import Redactor
from router.registry import discover_skills
from tests.router.router_helpers import OWNER_TURN

SKILLS = discover_skills()
KEY = "moltbook_sk_" + "writeParamsKey98765"
SHAPED = "ghp_" + "b" * 36  # a secret shape the router was never told about
# Valid params for each skill that writes; each free-text field is then replaced by a secret.
BASE = {
    "CREATE_POST": {
        "platform": "reddit",
        "text": "hello",
        "subreddit": "test",
        "title": "a title",
        "url": "https://example.com/a",
        "quote": "t3_abc",
    },
    "DELETE_POST": {"platform": "bsky", "post_id": "at://did:plc:a/app.bsky.feed.post/b"},
    "LIKE_POST": {"platform": "mastodon", "post_id": "1234"},
    "MOLTBOOK_COMMENT": {"post_id": "p1", "text": "hello"},
    "NOTE": {"text": "hello"},
}
WRITE_SKILLS = sorted(name for name, skill in SKILLS.items() if skill.side_effect)


def pipeline() -> Pipeline:
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:pw@127.0.0.1:1/0"})
    redactor = Redactor([KEY])
    return Pipeline(SKILLS, Policy(settings, SKILLS, redactor), redactor)


def secret_variants(skill_name: str):
    """(field, params) with a secret put in each string field the schema lets hold one."""
    skill = SKILLS[skill_name]
    for field, spec in skill.schema["properties"].items():
        if spec.get("type") != "string" or "enum" in spec:
            continue
        for secret in (KEY, SHAPED):
            for value in (secret, f"see {secret} here", f"https://example.com/?k={secret}"):
                params = {**BASE[skill_name], field: value}
                if skill.validation_error(params) is None:
                    yield field, params
                    break


def test_every_write_skill_has_base_params():
    assert set(WRITE_SKILLS) <= set(BASE), "add valid params for the new write skill to BASE"
    for name in WRITE_SKILLS:
        assert SKILLS[name].validation_error(BASE[name]) is None, name


@pytest.mark.parametrize("skill_name", WRITE_SKILLS)
def test_a_secret_in_any_param_of_a_write_is_refused_before_it_runs(skill_name):
    refused = pipeline()
    seen = set()
    for field, params in secret_variants(skill_name):
        seen.add(field)
        envelope = CommandEnvelope.new(skill_name, params, "t", ttl_seconds=60, origin=OWNER_TURN)
        planned = refused.plan(envelope)
        assert isinstance(planned, Planned), (field, planned)
        reply = refused.check(planned, None)
        assert reply is not None and reply.error == "secret_in_text", (skill_name, field, reply)
    assert seen, f"{skill_name}: no field could hold a secret; check BASE"


def test_a_write_without_a_secret_is_not_refused_for_one():
    checked = pipeline()
    for name in WRITE_SKILLS:
        planned = checked.plan(CommandEnvelope.new(name, BASE[name], "t", ttl_seconds=60))
        assert isinstance(planned, Planned)
        reply = checked.check(planned, None)
        assert reply is None or reply.error != "secret_in_text", (name, reply)


PLATFORM_WRITES = [
    (platform, action, params)
    for platform in ("bsky", "mastodon", "reddit", "x", "moltbook")
    for action, params in [
        ("CREATE_POST", {"platform": platform, "text": "a post"}),
        ("CREATE_POST", {"platform": platform, "text": "a reply", "reply_to": "t3_abc"}),
        ("CREATE_POST", {"platform": platform, "text": "a quote", "quote": "t3_abc"}),
        ("LIKE_POST", {"platform": platform, "post_id": "t3_abc"}),
        ("DELETE_POST", {"platform": platform, "post_id": "t3_abc"}),
    ]
] + [("moltbook", "MOLTBOOK_COMMENT", {"post_id": "p1", "text": "a comment"})]


def decide(env: dict[str, str], action: str, params: dict):
    settings = RouterSettings.from_env({"REDIS_URL": "redis://router:pw@127.0.0.1:1/0", **env})
    redactor = Redactor([KEY])
    checked = Pipeline(SKILLS, Policy(settings, SKILLS, redactor), redactor)
    planned = checked.plan(CommandEnvelope.new(action, params, "t", ttl_seconds=60))
    assert isinstance(planned, Planned), planned
    return planned.effect, checked.check(planned, None)


@pytest.mark.parametrize(("platform", "action", "params"), PLATFORM_WRITES)
def test_the_kill_switch_and_approvals_hold_every_write_on_every_platform(platform, action, params):
    effect, killed = decide({"ROUTER_KILL_SWITCH": "on"}, action, params)
    assert effect.platform == platform and killed is not None and killed.error == "kill_switch", killed
    for setting in (action, f"{platform}:{effect.kind}", effect.kind, f"{platform}:*", f"*:{effect.kind}"):
        _, held = decide({"ROUTER_REQUIRE_APPROVAL": setting}, action, params)
        assert held is not None and held.status == "pending_approval", (setting, held)


@pytest.mark.parametrize(
    "platform", ["BSKY", " bsky", "bsky ", "\uff42\uff53\uff4b\uff59", "bsky\u200b", "Bsky", ""]
)
def test_a_platform_in_another_spelling_is_invalid_never_another_effect(platform):
    for name in WRITE_SKILLS:
        if "platform" in SKILLS[name].schema["properties"]:
            assert SKILLS[name].validation_error({**BASE[name], "platform": platform}), (name, platform)


def test_no_write_skill_takes_a_param_it_does_not_declare():
    for name in WRITE_SKILLS:
        assert SKILLS[name].validation_error({**BASE[name], "in_reply_to": "x"}), name
        assert (
            SKILLS[name].validation_error({**BASE[name], "reply_to": ""}) if name == "CREATE_POST" else True
        )


def test_a_write_on_a_platform_the_bounds_do_not_list_is_still_bounded(redis_urls, admin, tmp_path):
    """A skill added later for a new platform gets the default quotas, the duplicate guard and the
    circuit breaker at once; the bounds never wave through a platform they were not told about."""
    from router.policy.effects import Effect, scopes
    from router.registry import Skill
    from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

    sent: list[str] = []
    new_platform = Skill(
        name="MYSPACE_POST",
        description="tests only: a post on a platform the bounds do not list",
        schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        side_effect=True,
        run=lambda params, ctx: sent.append(params["text"]) or {"posted": True},
        effect=lambda params: Effect("myspace", "post", params["text"]),
        effects=scopes(["myspace"], ["post"]),
    )
    texts = [
        "first words",
        "second words entirely",
        "the third one",
        "a fourth",
        "number five here",
        "and a sixth",
    ]
    with WorkerThread(settings_for(redis_urls.router_url, tmp_path), {"MYSPACE_POST": new_platform}):
        replies = [
            reply_of(admin, redis_urls.keys, push(admin, redis_urls.keys, "MYSPACE_POST", {"text": t}))
            for t in texts
        ]
    assert [r["status"] for r in replies[:5]] == ["ok"] * 5
    assert replies[5]["error"] == "quota_exceeded" and len(sent) == 5
