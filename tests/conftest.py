"""Shared fixtures. Every test runs against its own workspace and config in a tmp dir."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from agent.workspace.folder import SHIPPED_WORKSPACE, TEMPLATES, Workspace

REPO_ROOT = Path(__file__).resolve().parent.parent
# Fixtures built once for several tests: under pytest-xdist (`make test`), every worker builds its own.
SHARED_SCOPES = frozenset({"module", "package", "class"})


# An id naming where an object lies in memory differs between processes; pytest-xdist then refuses
# the run ("Different tests were collected"), so it is refused here, in a serial run too.
MEMORY_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{4,}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep the tests of one module on one xdist worker when they share a module-scoped fixture
    (a loaded model, a router, a platform fake), so it is built once, as in a serial run
    (`--dist loadgroup`). Other tests are spread one by one."""
    unstable = [item.nodeid for item in items if MEMORY_ADDRESS.search(item.nodeid)]
    if unstable:
        raise pytest.UsageError(
            "test ids must be the same in every process (make test runs several); these name a "
            "memory address, give their parametrize `ids` without it: " + ", ".join(unstable)
        )
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


SLOW_SECONDS = 5.0  # a test longer than this carries @pytest.mark.slow
_unmarked_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "slow" not in report.keywords:
        _unmarked_seconds[report.nodeid] = _unmarked_seconds.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Name the tests over SLOW_SECONDS without the slow mark. Only in a serial run: in parallel
    workers a test's time includes waiting for a core."""
    if config.getoption("numprocesses", None):
        return
    over = sorted(((s, n) for n, s in _unmarked_seconds.items() if s > SLOW_SECONDS), reverse=True)
    if over:
        terminalreporter.section(f"over {SLOW_SECONDS:g} s without @pytest.mark.slow")
        for seconds, nodeid in over:
            terminalreporter.write_line(f"{seconds:6.2f}s {nodeid}")


@pytest.fixture(scope="session")
def llm_cache_dir(tmp_path_factory) -> Path:
    """The embedded model's warm-up cache, shared by the session's tests (it depends only on the
    model and the prompt), never the developer's own."""
    return tmp_path_factory.mktemp("llm-cache")


@pytest.fixture(autouse=True)
def isolated_state(tmp_path, monkeypatch, llm_cache_dir):
    """Point all agent state at tmp dirs, and keep the developer's real environment out."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name in TEMPLATES:
        shutil.copyfile(SHIPPED_WORKSPACE / name, workspace / name)
    monkeypatch.setenv("SAFECLAW_WORKSPACE", str(workspace))
    monkeypatch.setenv("SAFECLAW_CONFIG", str(tmp_path / "config.json"))
    monkeypatch.setenv("SAFECLAW_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("SAFECLAW_LLM_CACHE_DIR", str(llm_cache_dir))
    for name in (
        "REDIS_URL",
        "OLLAMA_HOST",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "TELEGRAM_BOT_TOKEN",
        "REMOTE_BROWSER_SERVER",
        "SAFECLAW_LLM_PROVIDER",
        "SAFECLAW_LLM_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    return workspace


@pytest.fixture
def workspace(isolated_state) -> Workspace:
    ws = Workspace.from_env(os.environ)
    assert ws.root == isolated_state.resolve()
    ws.ensure()
    return ws


from tests.support.redis_server import admin, redis_server, redis_urls  # noqa: E402, F401
