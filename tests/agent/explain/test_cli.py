"""python -m agent.explain URL [--json] as a real process: progress on stderr, the answer on stdout."""

import json
import os
import subprocess
import sys

import pytest

from evals.stack import EvalStack
from tests.agent.explain.test_explain_post import BULLETS, seed, step, verdict
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def stack(appview, tmp_path_factory):
    stack = EvalStack(tmp_path_factory.mktemp("cli-stack"), appview.url)
    with stack:
        yield stack


def run_cli(stack, tmp_path, replies, *args):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    env = {
        **os.environ,
        "REDIS_URL": stack.agent_redis_url,
        "SAFECLAW_LLM_PROVIDER": "scripted",
        "SAFECLAW_SCRIPTED_REPLIES": str(script),
    }
    return subprocess.run(
        [sys.executable, "-m", "agent.explain", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_text_output_has_bullets_then_numbered_sources(stack, bsky, tmp_path):
    url, _ = seed(bsky)
    done = run_cli(
        stack,
        tmp_path,
        [step("search", "enshittification"), step("finish", bullets=BULLETS), verdict("pass", "good")],
        url,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2] == "• " + BULLETS[0]
    assert (
        "Sources:" in done.stdout
        and "[3] [outside: (at)dictwatch[.]test]: https://bsky.app/profile/dictwatch.test/post/" in done.stdout
    )
    for line in ("round 1 of 10", "searching Bluesky: enshittification", "checking the answer: it holds",
                 "second reading: pass (good)"):
        assert line in done.stderr.splitlines()
    assert "round 1" not in done.stdout


def test_json_output_is_one_object(stack, bsky, tmp_path):
    url, _ = seed(bsky)
    replies = [step("search", "enshittification"), step("finish", bullets=BULLETS), verdict("pass")]
    result = json.loads(run_cli(stack, tmp_path, replies, url, "--json").stdout)
    assert result["passed"] is True and result["bullets"] == BULLETS and result["url"] == url
    assert [s["n"] for s in result["sources"]] == [2, 3] and result["searches"] == ["enshittification"]


def test_an_answer_that_never_passes_exits_1_marked_not_passing(stack, bsky, tmp_path):
    url, _ = seed(bsky)
    done = run_cli(stack, tmp_path, [step("finish", bullets=BULLETS), verdict("pass")], url, "--json")
    result = json.loads(done.stdout)
    # nothing was searched, so [2] and [3] were never read: the checks reject the answer
    assert done.returncode == 1 and result["passed"] is False
    assert "bullet 1 cites [2], which is not a source read in this run" in result["problems"]


def test_a_failure_exits_2_with_its_kind_in_json(stack, bsky, tmp_path):
    done = run_cli(stack, tmp_path, [], "https://bsky.app/profile/ghost.test/post/3l22222222222", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"] == "not_found"
    assert "explain: there is no Bluesky account @ghost.test" in done.stderr


@pytest.mark.parametrize(
    "args,kind",
    [
        (["javascript:alert(1)"], "malformed_url"),
        (["https://evil.test/profile/a.test/post/x"], "malformed_url"),
        (["https://bsky.app/profile/a.test/post/" + "x" * 3000], "malformed_url"),
    ],
)
def test_a_malformed_address_is_json_with_an_error_and_exit_2(stack, tmp_path, args, kind):
    done = run_cli(stack, tmp_path, [], *args, "--json")
    assert done.returncode == 2 and json.loads(done.stdout)["error"] == kind
    assert "Traceback" not in done.stderr and done.stderr.startswith("explain: ")


def test_a_crash_is_one_clear_line_and_valid_json(monkeypatch, capsys):
    import agent.explain.__main__ as cli

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setenv("SAFECLAW_LLM_PROVIDER", "scripted")
    monkeypatch.setattr(cli, "explain_post", broken)
    assert cli.main(["https://bsky.app/profile/a.test/post/3l2abc", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": "internal", "message": json.loads(out)["message"]}
    assert "RuntimeError: boom" in err and "Traceback" not in err


def test_a_router_that_times_out_is_json_with_its_kind(monkeypatch, capsys):
    import agent.app
    import agent.explain.__main__ as cli

    class Slow:
        def call(self, action, params, conversation, intent="", origin=None):
            return {"status": "unknown", "message": "no answer within 30s yet"}

    monkeypatch.setenv("SAFECLAW_LLM_PROVIDER", "scripted")
    monkeypatch.setattr(agent.app, "build_router", lambda settings, conn: Slow())
    assert cli.main(["https://bsky.app/profile/a.test/post/3l2abc", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["error"] == "router_timeout" and "in time" in err


@pytest.mark.parametrize("argv", [["--json"], ["--json", "a", "b"], ["--json", "--max-iterations", "x", "u"]])
def test_bad_arguments_under_json_are_json_too(argv, capsys):
    from agent.explain.__main__ import main

    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["error"] == "usage" and err.startswith("explain: ")
