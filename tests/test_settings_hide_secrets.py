"""No settings object prints a secret, in any process: a fake secret is planted in every setting
that holds one, each settings object (and each holder of credentials) is built, and its `repr`,
`str`, a log line naming it and a traceback with every frame's locals are searched for it."""

from __future__ import annotations

import dataclasses
import io
import logging
import traceback
from urllib.parse import urlsplit

import pytest

from agent.config.settings import load_settings
from dashboard.settings import DashboardSettings
from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES, SECRET_CREDENTIAL_VARIABLES
from protocol.hidden import HiddenValues
from router.app import build_worker
from router.config.credentials import load_credentials
from router.config.settings import RouterSettings
from router.mcp.links import QueueLink
from router.platforms import client_for, close_kept
from router.redaction import Redactor
from router.registry import SkillContext
from router.social.oneshot import OneShotRouter
from tests.router.router_helpers import MY_SKILLS, router_env


def planted(name: str) -> str:
    return f"Pl4nted{name.replace('_', '')}Fake9q"


REDIS_PASSWORD = planted("REDIS")
CREDENTIALS = {name: planted(name) for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names}
CREDENTIALS["MASTODON_INSTANCE"] = "https://mastodon.example"
SECRETS = [REDIS_PASSWORD, *(CREDENTIALS[name] for name in SECRET_CREDENTIAL_VARIABLES)]


def router_environment(tmp_path, url: str = f"redis://router:{REDIS_PASSWORD}@127.0.0.1:6379/0") -> dict:
    return {**router_env(url, tmp_path), **CREDENTIALS}


def held_as_a_local(thing: object) -> str:
    """The traceback of an error raised in a frame that holds `thing`, every frame's locals shown."""
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        shown = traceback.TracebackException.from_exception(exc, capture_locals=True)
        return "".join(shown.format()) + traceback.format_exc()


def logged(thing: object) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    log = logging.getLogger("tests.settings_hide_secrets")
    log.addHandler(handler)
    try:
        log.warning("settings: %s / %r", thing, thing)
        try:
            raise ValueError(thing)
        except ValueError:
            log.exception("failed with %s", thing)
    finally:
        log.removeHandler(handler)
    return out.getvalue()


def outputs(thing: object) -> dict[str, str]:
    return {
        "repr": repr(thing), "str": str(thing), "format": f"{thing}", "log": logged(thing),
        "traceback": held_as_a_local(thing),
    }  # fmt: skip


def assert_hidden(thing: object, secrets: list[str]) -> None:
    for where, text in outputs(thing).items():
        for secret in secrets:
            assert secret not in text, f"{type(thing).__name__}'s {where} shows {secret}: {text[:400]}"


def test_the_router_settings_hide_the_redis_password_and_every_credential(tmp_path):
    settings = RouterSettings.from_env(router_environment(tmp_path))
    assert settings.redis_password == REDIS_PASSWORD and settings.env["MASTODON_TOKEN"]  # still there to read
    assert_hidden(settings, SECRETS)


def test_settings_built_with_a_plain_dict_hide_it_too(tmp_path):
    settings = RouterSettings(redis_url=f"redis://router:{REDIS_PASSWORD}@h:1/0", keys=RouterSettings.from_env(
        router_environment(tmp_path)).keys, router_id="r1", env=dict(CREDENTIALS))
    assert isinstance(settings.env, HiddenValues)
    assert_hidden(settings, SECRETS)


def test_loaded_credentials_and_a_skills_context_hide_them(tmp_path):
    credentials = load_credentials(router_environment(tmp_path))
    assert credentials["MASTODON_TOKEN"] == CREDENTIALS["MASTODON_TOKEN"]
    assert_hidden(credentials, SECRETS)
    context = SkillContext("c1", "console", credentials=dict(CREDENTIALS), env={}, data_dir=tmp_path)
    assert_hidden(context, SECRETS)


def test_a_kept_platform_client_hides_what_it_was_built_with(tmp_path):
    context = SkillContext("c1", "console", credentials=load_credentials(CREDENTIALS), env={}, data_dir=tmp_path)
    try:
        client = client_for("mastodon", context)
        assert_hidden(client, SECRETS)
        from router import platforms

        assert_hidden(platforms._thread_kept(), SECRETS)  # what a traceback in a skill's thread holds
    finally:
        close_kept()


def test_the_worker_and_what_it_holds_hide_them(redis_server, tmp_path):
    settings = RouterSettings.from_env(router_environment(tmp_path, redis_server.router_url))
    secrets = [*SECRETS[1:], urlsplit(redis_server.router_url).password]
    worker = build_worker(settings, MY_SKILLS, dict(CREDENTIALS))
    try:
        # A settings dataclass is searched by its printed forms; its fields are its values to read.
        parts = [v for v in vars(worker).values() if hasattr(v, "__dict__") and not dataclasses.is_dataclass(v)]
        for holder in (worker, *parts):  # the worker and whatever it holds (its runner, heartbeat...)
            assert_hidden(holder, secrets)
            for name, value in vars(holder).items():
                assert not any(s in repr(value) for s in secrets), f"{type(holder).__name__}.{name}"
    finally:
        worker.conn.close()


def test_the_one_shot_tool_hides_them(tmp_path):
    env = {key: value for key, value in router_environment(tmp_path).items() if key != "REDIS_URL"}
    oneshot = OneShotRouter(env, Redactor(SECRETS))
    assert_hidden(oneshot, SECRETS)
    for name, value in vars(oneshot).items():
        assert not any(s in repr(value) for s in SECRETS), f"OneShotRouter.{name}"


def test_the_dashboard_settings_hide_the_token_and_the_redis_password():
    token = planted("DASHBOARDTOKEN")
    settings = DashboardSettings.from_env(
        {"REDIS_URL": f"redis://control:{REDIS_PASSWORD}@127.0.0.1:6379/0", "DASHBOARD_TOKEN": token}
    )
    assert settings.token == token
    assert_hidden(settings, [token, REDIS_PASSWORD])


def test_the_mcp_servers_queue_link_hides_its_login():
    link = QueueLink(f"redis://mcp:{REDIS_PASSWORD}@127.0.0.1:6379/0", "r:", "q", 5.0)
    assert_hidden(link, [REDIS_PASSWORD])
    assert not any(REDIS_PASSWORD in repr(value) for value in vars(link).values())


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GEMINI_API_KEY", "OLLAMA_API_KEY", "TELEGRAM_BOT_TOKEN"])
def test_the_agent_settings_hide_its_keys(tmp_path, monkeypatch, name):
    monkeypatch.setenv("SAFECLAW_CONFIG", str(tmp_path / "config.json"))
    env = {"SAFECLAW_CONFIG": str(tmp_path / "config.json"), name: planted(name),
           "REDIS_URL": f"redis://agent:{REDIS_PASSWORD}@127.0.0.1:6379/0"}  # fmt: skip
    settings = load_settings(env)
    assert planted(name) in settings.secrets()
    assert_hidden(settings, [planted(name), REDIS_PASSWORD])
