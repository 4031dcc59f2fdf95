"""`python agent/start_agent.py` as a user runs it: a real subprocess with piped stdin."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_ollama import FakeOllama

REPO = Path(__file__).resolve().parents[2]


def run_agent(*args, stdin="", env=None, cwd=REPO, script="agent/start_agent.py", timeout=60):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, script, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )


def test_help_lists_commands():
    out = run_agent("--help").stdout
    for word in ("config timeout", "config llm", "config telegram", "clear", "status", "doctor", "--channel"):
        assert word in out


def test_console_chat_through_ollama_writes_memory(workspace):
    with FakeOllama() as ollama:
        ollama.enqueue(
            'I will remember that. <tool_code>[{"name": "_MEMORY_WRITE", '
            '"params": {"new_memory": {"favourite_colour": "green"}}}]</tool_code>',
            "Saved: your favourite colour is green.",
            "Your favourite colour is green.",
        )
        done = run_agent(
            stdin="My favourite colour is green.\nWhat is my favourite colour?\n",
            env={"OLLAMA_HOST": ollama.url},
        )
        prompts = [r.body["messages"][-1]["content"] for r in ollama.requests if r.path == "/api/chat"]
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Saved: your favourite colour is green.",
        "Your favourite colour is green.",
    ]
    memory = json.loads(workspace.memory_path.read_text())
    assert memory["favourite_colour"]["value"] == "green"
    assert memory["favourite_colour"]["conversation"] == "console"
    assert "favourite_colour" in prompts[2]  # the next turn's prompt carries the memory
    assert (workspace.output_dir / "prompt_cache.txt").read_text() == prompts[2]


def test_runs_from_inside_the_agent_folder(workspace):
    with FakeOllama() as ollama:
        ollama.enqueue("Hello from inside.")
        done = run_agent(
            stdin="hi\n", env={"OLLAMA_HOST": ollama.url}, cwd=REPO / "agent", script="start_agent.py"
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from inside.\n"


def test_dead_ollama_gives_a_clear_message_and_keeps_running(workspace):
    done = run_agent(stdin="first\nsecond\n", env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all("ollama" in line.lower() for line in lines)
    assert [t["user"] for t in json.loads((workspace.history_dir / "console.json").read_text())["turns"]] == [
        "first",
        "second",
    ]


def test_refuses_platform_credentials_in_its_environment():
    done = run_agent(stdin="hi\n", env={"BSKY_PASSWORD": "planted-secret-value-123"})
    assert done.returncode == 2
    assert "BSKY_PASSWORD" in done.stderr and "router" in done.stderr
    assert "planted-secret-value-123" not in done.stderr + done.stdout


def test_clear_removes_only_runtime_state(workspace):
    workspace.merge_memory({"keep": "me"}, "console")
    workspace.save_artifact({"conversation": "console"})
    workspace.begin_turn("console", "hello")
    done = run_agent("clear")
    assert done.returncode == 0 and "artifact.json" in done.stdout
    assert not workspace.artifact_path.exists() and not list(workspace.history_dir.glob("*.json"))
    assert workspace.memory_path.exists()


def test_config_timeout_interactively(tmp_path):
    done = run_agent("config", "timeout", stdin="abc\n42\n")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "config.json").read_text())["timeout"] == 42
    assert "Try again" in done.stdout


def test_corrupt_config_names_the_file(tmp_path):
    (tmp_path / "config.json").write_text("{")
    done = run_agent(stdin="hi\n")
    assert done.returncode == 2 and "config.json is not valid JSON" in done.stderr


@pytest.mark.parametrize("provider", ["claude"])
def test_unknown_provider_is_refused(tmp_path, provider):
    done = run_agent(stdin="hi\n", env={"SAFECLAW_LLM_PROVIDER": provider})
    assert done.returncode == 2 and "SAFECLAW_LLM_PROVIDER 'claude' is not one of" in done.stderr


def test_doctor_names_a_platform_credential_instead_of_refusing_to_run():
    done = run_agent("doctor", env={"MASTODON_TOKEN": "planted-doctor-secret-42"})
    assert done.returncode == 1
    assert "MASTODON_TOKEN" in done.stdout
    assert "planted-doctor-secret-42" not in done.stdout + done.stderr
