"""`status` marks what keeps posts from going out with `!` (issue 22: the kill switch on looked like
all is well): not a failure (the exit code stays 0), but not the ✓ of a healthy part either."""

from __future__ import annotations

import io

import redis

from agent.channels.display import showable
from agent.status.line import Check
from agent.status.stack import posting_lines
from protocol import kill_switch


def marks(urls, beat: dict, switch_on: bool | None) -> dict[str, str]:
    """The marks of the posting lines, the live switch set as `switch_on` (None: never set)."""
    admin = urls.admin_client()
    if switch_on is None:
        admin.delete(urls.keys.kill_switch)
    else:
        kill_switch.flip(admin, urls.keys, switch_on, "owner")
    admin.close()
    lines = posting_lines(redis.Redis.from_url(urls.agent_url), urls.keys, [beat])
    assert all(check.ok for check in lines)
    return {check.text.split(":", 1)[0]: check.line()[0] for check in lines}


def test_kill_switch_on_and_dry_run_on_are_marked_for_the_eye_but_are_no_failure(redis_urls):
    beat = {"router_id": "r1", "dry_run": True}
    assert marks(redis_urls, beat, True) == {"kill switch": "!", "dry run": "!"}
    floor = {"router_id": "r1", "kill_switch_floor": True, "dry_run": False}
    assert marks(redis_urls, floor, False) == {"kill switch": "!", "dry run": "✓"}


def test_the_usual_state_keeps_its_tick(redis_urls):
    for switch in (False, None):
        assert marks(redis_urls, {"router_id": "r1", "dry_run": False}, switch) == {
            "kill switch": "✓", "dry run": "✓"}


def test_marks_in_a_terminal_that_cannot_show_them():
    latin1 = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    lines = [Check(True, "fine").line(), Check(False, "broken “here”").line(), Check(True, "on", notice=True).line()]
    assert [showable(line, latin1) for line in lines] == ["+ fine", 'x broken "here"', "! on"]
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert [showable(line, utf8) for line in lines] == lines
