"""Input to `python -m router.social` that is not UTF-8 is `invalid_json` in every locale, the
POSIX one included (where Python reads stdin with surrogate escapes, so the bytes would have
passed as text and been judged as a command)."""

from __future__ import annotations

import pytest

from tests.router.social.test_social_cli import run_cli

NOT_UTF8 = [
    b'{"command": "caf\xe9", "platform": "x"}',  # Latin-1
    b'{"command": "auth_test", "platform": "bsky\xff"}',
    b'{"command": "auth_test", "platform": "x", "text": "\xed\xa0\x80"}',  # a surrogate as UTF-8
    b"\xff\xfe\xfd",
]


@pytest.mark.parametrize("locale", ["C", "POSIX", "C.UTF-8"])
@pytest.mark.parametrize("stdin", NOT_UTF8)
def test_input_that_is_not_utf8_is_invalid_json_in_any_locale(tmp_path, locale, stdin):
    code, answer, _ = run_cli(stdin, tmp_path, LC_ALL=locale, LANG=locale)
    assert (code, answer["success"], answer["error"]) == (1, False, "invalid_json"), answer
    assert "not UTF-8" in answer["message"]


def test_utf8_input_in_the_posix_locale_is_read_as_written(tmp_path):
    code, answer, _ = run_cli('{"command": "café", "platform": "x"}', tmp_path, LC_ALL="C", LANG="C")
    assert (code, answer["error"]) == (1, "unknown_command") and "café" in answer["message"]
