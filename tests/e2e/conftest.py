"""The whole stack for end-to-end tests: five platform fakes, a real redis-server, the router as
`python router/start_router.py` and the agent as `python agent/start_agent.py` with piped stdin
and the scripted LLM (`SAFECLAW_LLM_PROVIDER=scripted`).

Everything a test starts (fakes, router) is stopped by its own handle in the fixture's teardown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES, SECRET_CREDENTIAL_VARIABLES
from tests.router.router_helpers import RouterProcess, router_env, wait_until
from tests.support.fake_bsky import FakeBluesky
from tests.support.fake_mastodon import FakeMastodon
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.fake_reddit import FakeReddit
from tests.support.fake_x import ME_ID, FakeX

REPO_ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = ("bsky", "mastodon", "reddit", "x", "moltbook")
CREDENTIAL_VARIABLES = tuple(name for names in PLATFORM_CREDENTIAL_VARIABLES.values() for name in names)
BASE_URL_VARIABLES = (
    "BSKY_SERVICE",
    "BSKY_APPVIEW",
    "REDDIT_URL",
    "REDDIT_OAUTH_URL",
    "X_API_BASE",
    "MOLTBOOK_API_BASE",
)
ROUTER_ID = "e2e"


def make_credentials(tag: str = "e2e", special: str = "") -> dict[str, str]:
    """A distinct, long value per secret credential variable (`special` adds URL-unsafe characters)."""
    values = {
        name: f"{tag}-{name.lower().replace('_', '-')}-{uuid.uuid4().hex}{special}"
        for name in sorted(SECRET_CREDENTIAL_VARIABLES - {"X_ACCESS_TOKEN"})
    }
    values["X_ACCESS_TOKEN"] = f"{ME_ID}-{tag}-x-access-token-{uuid.uuid4().hex}{special}"
    values["BSKY_HANDLE"] = "safeclaw.test"
    values["REDDIT_USERNAME"] = "safeclaw_bot"
    return values  # MASTODON_INSTANCE (a URL, not a secret) is added once the fake runs


class Fakes:
    """All five platform fakes, started with `credentials` as the accounts' real secrets."""

    def __init__(self, credentials: dict[str, str]) -> None:
        c = credentials
        self.bsky = FakeBluesky(handle=c["BSKY_HANDLE"], password=c["BSKY_PASSWORD"])
        self.mastodon = FakeMastodon(token=c["MASTODON_TOKEN"])
        self.reddit = FakeReddit(
            client_id=c["REDDIT_CLIENT_ID"],
            secret=c["REDDIT_SECRET"],
            username=c["REDDIT_USERNAME"],
            password=c["REDDIT_PASSWORD"],
        )
        self.x = FakeX(
            api_key=c["X_API_KEY"],
            api_secret=c["X_API_SECRET"],
            access_token=c["X_ACCESS_TOKEN"],
            access_secret=c["X_ACCESS_SECRET"],
        )
        self.moltbook = FakeMoltbook(api_key=c["MOLTBOOK_API_KEY"])
        self.all: dict[str, Any] = {
            "bsky": self.bsky,
            "mastodon": self.mastodon,
            "reddit": self.reddit,
            "x": self.x,
            "moltbook": self.moltbook,
        }

    def start(self) -> Fakes:
        for fake in self.all.values():
            fake.start()
        return self

    def stop(self) -> None:
        for fake in self.all.values():
            fake.stop()

    def set_fail_mode(self, mode: str | None) -> None:
        for fake in self.all.values():
            fake.fail_mode = mode

    def base_urls(self) -> dict[str, str]:
        return {
            "BSKY_SERVICE": self.bsky.url,
            "BSKY_APPVIEW": self.bsky.url,
            "MASTODON_INSTANCE": self.mastodon.url,
            "REDDIT_URL": self.reddit.url,
            "REDDIT_OAUTH_URL": self.reddit.url,
            "X_API_BASE": self.x.url,
            "MOLTBOOK_API_BASE": self.moltbook.base,
        }

    def request_count(self) -> int:
        return sum(len(fake.requests) for fake in self.all.values())

    def posted_texts(self, platform: str) -> list[str]:
        """The text of every post-creating request the fake received."""
        if platform == "bsky":
            return [
                w["record"]["text"] for w in self.bsky.writes() if w["collection"] == "app.bsky.feed.post"
            ]
        if platform == "mastodon":
            from urllib.parse import parse_qs

            return [parse_qs(r.body.decode())["status"][-1] for r in self.mastodon.posts()]
        if platform == "reddit":
            return [r.form().get("text", "") for r in self.reddit.requests if r.path == "/api/submit/"]
        if platform == "x":
            return [r.json()["text"] for r in self.x.requests if r.method == "POST" and r.path == "/2/tweets"]
        return [
            r.json().get("content", "")
            for r in self.moltbook.requests
            if r.method == "POST" and r.path == "/api/v1/posts"
        ]

    def deletes(self) -> list[str]:
        """Paths of every delete request any fake received."""
        found = [r.path for r in self.bsky.requests if r.path.endswith("deleteRecord")]
        found += [r.path for r in self.reddit.requests if r.path == "/api/del/"]
        for fake in (self.mastodon, self.x, self.moltbook):
            found += [r.path for r in fake.requests if r.method == "DELETE"]
        return found


@dataclass
class AgentRun:
    returncode: int
    stdout: str
    stderr: str
    environ: dict[str, str]  # the agent process's own environment, read from /proc while it ran


def tool_reply(message: str, *actions: tuple[str, dict[str, Any]]) -> str:
    """An LLM reply asking for `actions` in SafeClaw's `<tool_code>` format."""
    block = json.dumps([{"name": name, "params": params} for name, params in actions])
    return f"{message} <tool_code>{block}</tool_code>"


class Stack:
    """One test's stack: fakes, Redis users, a router subprocess and agent runs."""

    def __init__(self, tmp_path: Path, redis_urls: Any, credentials: dict[str, str], fakes: Fakes) -> None:
        self.tmp = tmp_path
        self.redis = redis_urls
        self.credentials = {**credentials, "MASTODON_INSTANCE": fakes.mastodon.url}
        self.fakes = fakes
        self.data_dir = tmp_path / "router-data"
        self.agent_log_dir = tmp_path / "agent-logs"
        self.workspace = Path(os.environ["SAFECLAW_WORKSPACE"])
        self.router: RouterProcess | None = None
        self._runs = 0

    # -- router ----------------------------------------------------------------------------
    def router_environment(self, **policy: str) -> dict[str, str]:
        settings = {"ROUTER_DRY_RUN": "false", **self.credentials, **self.fakes.base_urls(), **policy}
        return router_env(self.redis.router_url, self.data_dir, ROUTER_ID, **settings)

    def start_router(self, **policy: str) -> None:
        assert self.router is None, "one router per stack"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.router = RouterProcess(self.router_environment(**policy))
        admin = self.redis.admin_client()
        try:

            def ready() -> bool:
                assert self.router is not None and self.router.process.poll() is None, self.router_text()
                return bool(admin.exists(self.redis.keys.router_heartbeat(ROUTER_ID)))

            wait_until(ready, "the router's heartbeat", deadline_seconds=30)
        finally:
            admin.close()

    def stop_router(self) -> int | None:
        if self.router is None:
            return None
        self.router.stop()
        code = self.router.process.returncode
        self.router = None
        return code

    def router_text(self) -> str:
        """Everything the router wrote to disk: log, stderr, outbox, notes."""
        return files_text(self.data_dir)

    # -- agent -----------------------------------------------------------------------------
    def agent_environment(self, replies: list[str], **extra: str) -> dict[str, str]:
        self._runs += 1
        replies_file = self.tmp / f"replies-{self._runs}.json"
        replies_file.write_text(json.dumps(replies), encoding="utf-8")
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in CREDENTIAL_VARIABLES and k not in BASE_URL_VARIABLES and not k.startswith("ROUTER_")
        }
        env.update(
            {
                "REDIS_URL": self.redis.agent_url,
                "SAFECLAW_LLM_PROVIDER": "scripted",
                "SAFECLAW_SCRIPTED_REPLIES": str(replies_file),
                "SAFECLAW_LOG_DIR": str(self.agent_log_dir),
                **extra,
            }
        )
        return env

    def run_agent(self, replies: list[str], stdin: str, timeout: float = 90, **extra: str) -> AgentRun:
        """`python agent/start_agent.py` with `stdin` piped; end of input ends it."""
        env = self.agent_environment(replies, **extra)
        process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "agent" / "start_agent.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env=env,
        )
        try:
            environ = read_environ(process)  # it waits on stdin, so it is alive now
            stdout, stderr = process.communicate(stdin, timeout=timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        return AgentRun(process.returncode, stdout, stderr, environ)

    def agent_files_text(self) -> str:
        return files_text(self.workspace) + files_text(self.agent_log_dir)

    def artifact(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.workspace / "artifact.json").read_text(encoding="utf-8"))
        return data

    def prompt_cache(self) -> str:
        return (self.workspace / "output" / "prompt_cache.txt").read_text(encoding="utf-8")


def read_environ(process: subprocess.Popen[str], deadline_seconds: float = 10.0) -> dict[str, str]:
    """The environment of a live process ({} if it has gone). Right after a vfork-style spawn the
    kernel may not have set up the new image's environment yet, so an empty read is retried."""
    deadline = time.monotonic() + deadline_seconds
    raw = b""
    while not raw and time.monotonic() < deadline and process.poll() is None:
        try:
            raw = Path(f"/proc/{process.pid}/environ").read_bytes()
        except OSError:
            return {}
        if not raw:
            time.sleep(0.01)
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def files_text(root: Path) -> str:
    """Every file under `root` as text, each headed by its path (binary bytes decoded leniently)."""
    if not root.exists():
        return ""
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        parts.append(f"== {path}\n{path.read_bytes().decode('utf-8', errors='replace')}")
    return "\n".join(parts)


def redis_dump(client: Any) -> str:
    """Every key and its value, dumped by type (admin user: sees every key)."""
    lines = []
    for key in client.scan_iter(match="*", count=500):
        kind = client.type(key)
        if kind == "string":
            value: Any = client.get(key)
        elif kind == "list":
            value = client.lrange(key, 0, -1)
        elif kind == "hash":
            value = client.hgetall(key)
        elif kind == "set":
            value = sorted(client.smembers(key))
        elif kind == "zset":
            value = client.zrange(key, 0, -1, withscores=True)
        elif kind == "stream":
            value = [[entry_id, fields] for entry_id, fields in client.xrange(key)]
        else:
            value = f"(type {kind})"
        lines.append(f"{key!s} [{kind!s}] {json.dumps(value, ensure_ascii=False, default=str)}")
    return "\n".join(lines)


@pytest.fixture
def credentials() -> dict[str, str]:
    return make_credentials()


@pytest.fixture
def stack(tmp_path, redis_urls, credentials) -> Iterator[Stack]:
    fakes = Fakes(credentials).start()
    built = Stack(tmp_path, redis_urls, credentials, fakes)
    try:
        yield built
    finally:
        try:
            built.stop_router()
        finally:
            fakes.stop()
