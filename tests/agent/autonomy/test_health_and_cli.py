"""Stuck detection, `autonomy once` / `autonomy health`, the settings, and the git journal."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent.autonomy.journal import GitJournal
from agent.config.channel_sections import AutonomySettings
from agent.config.reader import Section
from agent.errors import ConfigError
from protocol.autonomy_heartbeat import Heartbeat, stuck_reason
from tests.agent.autonomy.helpers import StandInRouter, make_cycle
from tests.stack.stack_helpers import REPO_ROOT, START_AGENT
from tests.support.eager_poster import EagerPoster


def beat(ts: float, action: str = "idle", started: float | None = None) -> Heartbeat:
    return Heartbeat(ts, action, ts if started is None else started, 3, ts, 60)


def test_stuck_means_three_missed_intervals_or_one_action_over_ten_minutes():
    assert stuck_reason(beat(1000), 1000 + 180) is None
    assert "no heartbeat for 181s" in (stuck_reason(beat(1000), 1000 + 181) or "")
    assert stuck_reason(beat(1000, "turn", started=1000 - 600), 1000) is None
    assert "'turn' has run for 601s" in (stuck_reason(beat(1000, "turn", started=399), 1000) or "")
    assert stuck_reason(beat(1000, "idle", started=0), 1000) is None  # idle between cycles is fine
    assert stuck_reason(None, 0) == "no autonomy heartbeat yet"


def agent(*args, config=None, tmp_path=None, timeout=60):
    env = {k: v for k, v in __import__("os").environ.items()}
    env["SAFECLAW_LLM_PROVIDER"] = "scripted"
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    return subprocess.run(
        [sys.executable, str(START_AGENT), *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=timeout,
    )


def test_autonomy_once_runs_one_cycle_and_health_and_status_show_it(workspace, tmp_path):
    config = {"channels": {"autonomy": {"enabled": True, "cycle_interval": 15}}}
    once = agent("autonomy", "once", config=config, tmp_path=tmp_path)
    # No REDIS_URL: both reads fail, so nothing is new and the cycle rests without an LLM call.
    assert once.returncode == 0, once.stderr
    assert once.stdout.startswith("autonomy cycle 1: rested; 0 new item(s), 0 LLM call(s)")
    healthy = agent("autonomy", "health", tmp_path=tmp_path)
    assert healthy.returncode == 0 and "autonomy alive: cycle 1, idle" in healthy.stdout
    heartbeat = workspace.root / "autonomy" / "heartbeat.json"
    data = json.loads(heartbeat.read_text())
    data["timestamp"] -= 60  # over three intervals of 15 s
    heartbeat.write_text(json.dumps(data))
    stuck = agent("autonomy", "health", tmp_path=tmp_path)
    assert stuck.returncode == 1 and "autonomy STUCK: no heartbeat for 6" in stuck.stdout
    status = agent("status", tmp_path=tmp_path)
    assert "✗ autonomy STUCK" in status.stdout
    doctor = agent("doctor", tmp_path=tmp_path)
    assert "✗ autonomy STUCK" in doctor.stdout


@pytest.mark.parametrize(
    ("conf", "match"),
    [
        ({"cycle_interval": 14}, "'channels.autonomy.cycle_interval' must be a number from 15"),
        ({"submolts": []}, "submolts' must be a list of 1 to 10"),
        ({"submolts": ["../x"]}, "submolt names"),
        ({"quality_threshold": 1.5}, "quality_threshold"),
        ({"enabled": "yes"}, "enabled' must be true or false"),
        ({"max_cycle": 3}, "'channels.autonomy.max_cycle' is not a setting"),
    ],
)
def test_bad_autonomy_settings_stop_the_agent_naming_them(conf, match):
    with pytest.raises(ConfigError, match=match):
        AutonomySettings.parse(Section(conf, "config.json", "channels.autonomy"), {})


def test_the_defaults_are_the_issues():
    settings = AutonomySettings.parse(Section({}, "c", "channels.autonomy"), {})
    assert (settings.cycle_interval, settings.max_cycles, settings.quality_threshold) == (1800, 500, 0.7)


def test_the_git_journal_commits_state_after_each_cycle_and_never_credentials(workspace):
    (workspace.root / ".env").write_text("OPENAI_API_KEY=sk-" + "planted\n")
    (workspace.root / "governance").mkdir(exist_ok=True)
    (workspace.root / "governance" / "token.txt").write_text("secret")
    router = StandInRouter()
    router.add_post()
    cycle, _, clock = make_cycle(workspace, EagerPoster(), router)
    journal = GitJournal(workspace.root)
    cycle.after_cycle = lambda report: journal.commit(f"cycle {report.cycle}: {report.outcome}")
    cycle.run_once()
    clock.now += 60
    cycle.run_once()
    git = ["git", f"--git-dir={journal.git_dir}"]
    log = subprocess.run([*git, "log", "--format=%s"], capture_output=True, text=True).stdout.split("\n")
    assert log[:2] == ["cycle 2: rested", "cycle 1: acted"]
    files = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True
    ).stdout
    assert "governance/DOS.md" in files and "logs/activity.jsonl" in files and "autonomy/state.json" in files
    assert ".env" not in files and "token.txt" not in files
