"""`status` marks what keeps posts from going out with `!` (issue 22: the kill switch on looked like
all is well): not a failure (the exit code stays 0), but not the ✓ of a healthy part either."""

from __future__ import annotations

import io

from agent.channels.display import showable
from agent.status.line import Check
from agent.status.stack import posting_lines


def marks(beat: dict) -> dict[str, str]:
    return {check.text.split(":", 1)[0]: check.line()[0] for check in posting_lines([beat])}


def test_kill_switch_on_and_dry_run_on_are_marked_for_the_eye_but_are_no_failure():
    beat = {"router_id": "r1", "kill_switch": {"on": True, "by": "owner"}, "dry_run": True}
    assert marks(beat) == {"kill switch": "!", "dry run": "!"}
    assert all(check.ok for check in posting_lines([beat]))
    floor = {"router_id": "r1", "kill_switch_floor": True, "dry_run": False}
    assert marks(floor) == {"kill switch": "!", "dry run": "✓"}


def test_the_usual_state_keeps_its_tick():
    assert marks({"router_id": "r1", "kill_switch": {"on": False}, "dry_run": False}) == {
        "kill switch": "✓", "dry run": "✓"}


def test_marks_in_a_terminal_that_cannot_show_them():
    latin1 = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    lines = [Check(True, "fine").line(), Check(False, "broken “here”").line(), Check(True, "on", notice=True).line()]
    assert [showable(line, latin1) for line in lines] == ["+ fine", 'x broken "here"', "! on"]
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert [showable(line, utf8) for line in lines] == lines
