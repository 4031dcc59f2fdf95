"""The one-shot tool with no Redis: its bounds live in the embedded store in the router's data
folder, shared by every one-shot process at once (real processes, the Mastodon fake)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from router.audit.chain_check import verify_directory
from tests.support.fake_mastodon import FakeMastodon

REPO_ROOT = Path(__file__).resolve().parents[3]
TOKEN = "masto-oneshot-token-4471"


@pytest.fixture
def mastodon():
    server = FakeMastodon(token=TOKEN).start()
    yield server
    server.stop()


def start(tmp_path: Path, mastodon: FakeMastodon, text: str, **env: str) -> subprocess.Popen[bytes]:
    env_file = tmp_path / "router.env"
    env_file.touch()
    child_env = {"PATH": os.environ.get("PATH", ""), "ROUTER_ENV_FILE": str(env_file),
                 "ROUTER_DATA_DIR": str(tmp_path / "data"), "MASTODON_INSTANCE": mastodon.url,
                 "MASTODON_TOKEN": TOKEN, **env}
    process = subprocess.Popen([sys.executable, "-m", "router.social"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT, env=child_env)
    assert process.stdin is not None
    process.stdin.write(json.dumps({"command": "post", "platform": "mastodon", "text": text}).encode())
    process.stdin.close()
    return process


def answer_of(process: subprocess.Popen[bytes]) -> dict:
    assert process.stdout is not None and process.stderr is not None
    out = process.stdout.read().decode()
    process.stderr.read()
    process.wait(timeout=120)
    lines = out.splitlines()
    assert len(lines) == 1, out
    return json.loads(lines[0])


TOPICS = ("apples", "bridges", "clouds", "dolphins", "engines", "forests", "glaciers", "harbours", "islands",
          "jazz", "kites", "lanterns", "mountains", "novels", "oceans", "pianos", "quilts", "rivers",
          "satellites", "tulips")


@pytest.mark.slow
def test_twenty_concurrent_posts_with_a_quota_of_five_make_exactly_five(tmp_path, mastodon):
    # Texts far apart for the duplicate guard (at most 0.62 alike; it refuses 0.9): which five win
    # the race varies, so two near-alike texts would make the outcome vary too.
    processes = [start(tmp_path, mastodon, f"note number {i} about {topic}", ROUTER_QUOTAS="mastodon:post=5")
                 for i, topic in enumerate(TOPICS)]
    answers = [answer_of(p) for p in processes]
    posted = [a for a in answers if a["success"] is True]
    refused = [a for a in answers if a["success"] is False]
    assert len(posted) == 5 and len(mastodon.posts()) == 5 and len(mastodon.statuses) == 5
    assert {(a["error"], a["reason"]) for a in refused} == {("rate_limited", "quota_exceeded")}
    assert all("quota of 5 a day" in a["message"] and "00:00 UTC" in a["message"] for a in refused)
    assert all(a["retry_after"] >= 1 for a in refused)
    # One hash chain, written in turns by the twenty processes: a started line before each post.
    verdict = verify_directory(tmp_path / "data" / "audit")
    assert verdict.ok and verdict.lines == 5 * 2 + 15, verdict.summary()
    lines = [json.loads(line) for line in (tmp_path / "data" / "audit" / "oneshot.jsonl").read_text().splitlines()]
    assert sum(line["status"] == "started" for line in lines) == 5
    assert sum(line["decision"] == "denied: quota_exceeded" for line in lines) == 15
    assert {line["origin"]["channel"] for line in lines} == {"cli"}


def test_the_duplicate_guard_refuses_a_near_copy_from_another_process(tmp_path, mastodon):
    first = answer_of(start(tmp_path, mastodon, "Our spring meetup is on Saturday at the library, 3pm."))
    assert first["success"] is True, first
    again = answer_of(start(tmp_path, mastodon, "our spring meetup is on saturday at the library 3 pm!!"))
    assert (again["success"], again["error"], again["reason"]) == (False, "rate_limited", "duplicate_content")
    assert "similar" in again["message"] and "for 7 days" in again["message"]
    assert len(mastodon.statuses) == 1


def test_a_failed_post_gives_its_quota_back(tmp_path, mastodon):
    mastodon.fail_mode = "auth"
    failed = answer_of(start(tmp_path, mastodon, "this one is refused by the instance", ROUTER_QUOTAS="post=1"))
    assert (failed["success"], failed["error"]) == (False, "auth_failed")
    mastodon.fail_mode = None
    posted = answer_of(start(tmp_path, mastodon, "this one goes out", ROUTER_QUOTAS="post=1"))
    assert posted["success"] is True, posted
    refused = answer_of(start(tmp_path, mastodon, "and this one is one too many", ROUTER_QUOTAS="post=1"))
    assert (refused["error"], refused["reason"]) == ("rate_limited", "quota_exceeded")


def test_the_audit_log_is_the_routers_sealed_and_verified_by_its_tool(tmp_path, mastodon):
    answer_of(start(tmp_path, mastodon, "a first post for the audit log"))
    answer_of(start(tmp_path, mastodon, "A first post for the audit log!"))
    env = {"PATH": os.environ.get("PATH", ""), "ROUTER_AUDIT_KEY_FILE": str(tmp_path / "data" / "audit.key")}
    done = subprocess.run([sys.executable, "-m", "router.audit.verify", str(tmp_path / "data" / "audit")],
                          capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=60)
    assert done.returncode == 0 and "3 lines" in done.stdout, done.stdout + done.stderr
    records = (tmp_path / "data" / "audit" / "oneshot.jsonl").read_text().splitlines()
    last = json.loads(records[-1])
    assert (last["action"], last["decision"], last["effect"]["platform"]) == (
        "CREATE_POST", "denied: duplicate_content", "mastodon")
    assert TOKEN not in "".join(records)


def test_no_audit_line_no_write(tmp_path, mastodon):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "audit").write_text("a file where the audit folder should be")
    answer = answer_of(start(tmp_path, mastodon, "this must not go out unaudited"))
    assert (answer["success"], answer["error"]) == (False, "internal_error")
    assert "audit log" in answer["message"] and mastodon.statuses == {}
    read = subprocess.run([sys.executable, "-m", "router.social"], input='{"command": "auth_test", "platform": "mastodon"}',
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
                          env={"PATH": os.environ.get("PATH", ""), "ROUTER_ENV_FILE": str(tmp_path / "router.env"),
                               "ROUTER_DATA_DIR": str(tmp_path / "data"), "MASTODON_INSTANCE": mastodon.url,
                               "MASTODON_TOKEN": TOKEN})
    assert json.loads(read.stdout)["success"] is True  # a read is answered; its line is logged as lost
