"""Lines for a narrow terminal: broken at spaces, never inside a word or a link."""

from __future__ import annotations

from agent.channels.display import wrapped

STATUS = ("✓ router safeclaw-local alive (heartbeat 4s ago); it can post and reply, delete your "
          "posts and check your logins; platforms with credentials: none")


def test_a_long_line_breaks_at_spaces_with_a_hanging_indent():
    lines = wrapped(STATUS, 40, hang="  ").split("\n")
    assert all(len(line) <= 40 for line in lines), lines
    assert all(line.startswith("  ") for line in lines[1:]), lines
    assert " ".join(line.strip() for line in lines) == STATUS


def test_own_breaks_indents_and_long_links_are_kept():
    link = "https://example.com/" + "a" * 60
    text = f"What I remember:\n  - a note that is long enough to need a second line here\nsee {link} now"
    lines = wrapped(text, 30).split("\n")
    assert lines[0] == "What I remember:"
    assert lines[1].startswith("  - a note") and lines[2].startswith("  ")
    assert link in lines and "see" in lines and "now" in lines


def test_no_terminal_or_a_wide_one_leaves_the_text_as_it_is():
    assert wrapped(STATUS, None) == STATUS
    assert wrapped(STATUS, 500) == STATUS
