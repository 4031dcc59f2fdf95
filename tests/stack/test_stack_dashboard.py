"""`./safeclaw` starts the dashboard, prints its address and where the generated token is (never
the token), and the owner's control commands work as the control user."""

from __future__ import annotations

import json
import re

import pytest

from protocol.commands import CommandEnvelope
from protocol.keys import Keys
from router.audit.log import AuditLog
from router.policy.approval_store import ApprovalStore
from scripts.control_cli import run as control
from tests.stack.stack_helpers import FINAL_REPLY, run_stack, stack_env

KEYS = Keys()


def test_stack_prints_the_dashboard_address_and_a_private_token_file(tmp_path):
    run = run_stack(tmp_path, stack_env(tmp_path, [FINAL_REPLY]), "hello\n")
    assert run.returncode == 0, run.stderr
    match = re.search(r"dashboard on (http://127\.0\.0\.1:\d+/) \(token in (\S+)\)", run.stderr)
    assert match, run.stderr
    token_file = tmp_path / "run" / "dashboard.token"
    assert match.group(2) == str(token_file)
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    assert len(token) >= 24 and token not in run.stdout + run.stderr
    assert "dashboard" in run.pids


@pytest.mark.slow
def test_a_set_token_is_used_and_no_file_is_made(tmp_path):
    env = stack_env(tmp_path, [FINAL_REPLY], DASHBOARD_TOKEN="owner-chosen-" + "token-0123456789")
    run = run_stack(tmp_path, env, "hello\n")
    assert run.returncode == 0, run.stderr
    assert "token: your DASHBOARD_TOKEN" in run.stderr
    assert not (tmp_path / "run" / "dashboard.token").exists()


def test_no_dashboard_flag(tmp_path):
    run = run_stack(tmp_path, stack_env(tmp_path, [FINAL_REPLY]), "hello\n", "--no-dashboard")
    assert run.returncode == 0, run.stderr
    assert "dashboard" not in run.pids


@pytest.fixture
def control_env(tmp_path, redis_urls):
    (tmp_path / "dashboard.env").write_text(f"REDIS_URL={redis_urls.control_url}\n")
    (tmp_path / "router.env").write_text(f"ROUTER_DATA_DIR={tmp_path / 'data'}\n")
    return tmp_path


def cli(tmp_path, *argv):
    return control(list(argv), tmp_path / "run", tmp_path / "dashboard.env", tmp_path / "router.env", {})


def test_stop_and_resume_posting(control_env, redis_urls, capsys):
    admin = redis_urls.admin_client()
    assert cli(control_env, "stop-posting") == 0
    assert json.loads(admin.get(KEYS.kill_switch))["on"] is True
    stopped = capsys.readouterr().out
    assert "kill switch ON: nothing is posted, replied to, liked or deleted from now on" in stopped
    assert cli(control_env, "resume-posting") == 0
    assert json.loads(admin.get(KEYS.kill_switch))["on"] is False
    resumed = capsys.readouterr().out
    assert "kill switch off: posting is allowed again, within your rules" in resumed
    for internal in ("side effect", "under their policy"):
        assert internal not in stopped + resumed, internal


def test_approvals_approve_and_deny(control_env, redis_urls, capsys):
    import redis

    router = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(router, KEYS, "r1", 3600)
    made = []
    for text in ("first post", "second post"):
        envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": text}, "console", 60)
        made.append(store.request(envelope, {"platform": "bsky", "kind": "post"}, text).approval_id)
    assert cli(control_env, "approvals") == 0
    listing = capsys.readouterr().out
    assert all(approval_id in listing for approval_id in made) and "first post" in listing
    assert cli(control_env, "approve", made[0]) == 0
    assert cli(control_env, "approve", made[0]) == 1  # the first decision wins
    assert "already decided" in capsys.readouterr().err
    assert cli(control_env, "deny", made[1]) == 0
    assert cli(control_env, "deny", "f" * 32) == 1
    assert cli(control_env, "approve") == 1


def test_audit_verify(control_env, capsys):
    from router.audit import checkpoint as audit_checkpoint

    key = audit_checkpoint.load_key(control_env / "data" / "audit.key", create=True)
    log = AuditLog(control_env / "data" / "audit", "r1", key=key)
    for i in range(3):
        log.append({"command_id": f"c{i}"})
    log.close()
    assert cli(control_env, "audit", "verify") == 0
    path = control_env / "data" / "audit" / "r1.jsonl"
    path.write_bytes(path.read_bytes().replace(b"c1", b"c7"))
    assert cli(control_env, "audit", "verify") == 1
    assert "BROKEN" in capsys.readouterr().out


def test_audit_verify_with_redis_down_says_what_it_checked(control_env, capsys):
    """Redis unreachable: the keyed checkpoint vouches for the end (0); without it, exit 2 and
    the reason; lines cut from the end are still caught (1)."""
    from router.audit import checkpoint as audit_checkpoint
    from scripts.stack_redis import free_port

    (control_env / "dashboard.env").write_text(f"REDIS_URL=redis://control:x@127.0.0.1:{free_port()}/0\n")
    audit = control_env / "data" / "audit"
    key_file = control_env / "data" / "audit.key"
    log = AuditLog(audit, "r1", key=audit_checkpoint.load_key(key_file, create=True))
    for i in range(5):
        log.append({"command_id": f"c{i}"})
    log.close()
    assert cli(control_env, "audit", "verify") == 0
    out = capsys.readouterr().out
    assert "not reachable" in out and "vouched for by its keyed checkpoint" in out
    key_file.rename(control_env / "data" / "elsewhere.key")
    assert cli(control_env, "audit", "verify") == 2
    assert "NOT checked" in capsys.readouterr().out
    (control_env / "data" / "elsewhere.key").rename(key_file)
    path = audit / "r1.jsonl"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-2]))
    assert cli(control_env, "audit", "verify") == 1
    assert "2 line(s) deleted at the end" in capsys.readouterr().out


def test_no_control_login_is_a_clear_error(tmp_path, capsys):
    assert cli(tmp_path, "approvals") == 1
    assert "no control login" in capsys.readouterr().err


def test_audit_verify_catches_lines_cut_from_the_end(control_env, redis_urls, capsys):
    from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

    admin = redis_urls.admin_client()
    with WorkerThread(settings_for(redis_urls.router_url, control_env / "data")):
        for i in range(4):
            reply_of(admin, KEYS, push(admin, KEYS, "PING", {}, conversation=f"console-{i}"))
    assert cli(control_env, "audit", "verify") == 0
    assert "the Redis audit stream" in capsys.readouterr().out
    path = control_env / "data" / "audit" / "r1.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-2]))  # the chain of what is left is intact
    assert cli(control_env, "audit", "verify") == 1
    assert "2 line(s) deleted at the end" in capsys.readouterr().out


def test_the_approvals_listing_speaks_in_words(control_env, redis_urls, capsys):
    """`./safeclaw approvals` said "CREATE_POST on bsky (post), asked by console" and showed each
    field as a Python repr ('platform: bsky'): the internal names issue 21 item 7 took out of the
    console's replies."""
    import redis

    router = redis.Redis.from_url(redis_urls.router_url, decode_responses=True)
    store = ApprovalStore(router, KEYS, "r1", 3600)
    envelope = CommandEnvelope.new("CREATE_POST", {"platform": "bsky", "text": "a post that waits"}, "console", 60)
    approval_id = store.request(envelope, {"platform": "bsky", "kind": "post"}, "a post that waits").approval_id
    assert cli(control_env, "approvals") == 0
    listing = capsys.readouterr().out
    first = listing.splitlines()[0]
    assert first.startswith(f"{approval_id}  Post on Bluesky, from the console, asked "), first
    assert "expires" in first and "CREATE_POST" not in listing and "(post)" not in first, listing
    assert "    text: a post that waits" in listing and "'" not in listing, listing
    assert f"./safeclaw approve {approval_id}" in listing  # what to do next
