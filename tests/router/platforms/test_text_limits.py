import pytest
import regex

from router.platforms.text_limits import (
    ELLIPSIS,
    grapheme_length,
    mastodon_length,
    truncate,
    x_weighted_length,
)

FAMILY = "👨‍👩‍👧‍👦"  # one grapheme, seven code points
FLAG = "🇫🇷"
COMBINING = "e\u0301"  # é as e + combining acute


def test_grapheme_length_counts_clusters_not_code_points():
    assert grapheme_length(FAMILY) == 1
    assert grapheme_length(FLAG + COMBINING + "ab") == 4
    assert len(FAMILY) == 7


def test_short_text_is_untouched():
    assert truncate("hello", 300) == ("hello", False)


@pytest.mark.parametrize("unit", ["a", FAMILY, FLAG, COMBINING, "字"])
def test_truncation_fits_and_ends_on_a_grapheme_boundary(unit):
    text = unit * 400
    cut, truncated = truncate(text, 300)
    assert truncated
    assert grapheme_length(cut) == 300
    assert cut.endswith(ELLIPSIS)
    body = cut[: -len(ELLIPSIS)]
    assert regex.findall(r"\X", body) == [unit] * 299  # no cluster split in half


def test_truncation_does_not_split_a_zwj_sequence_at_the_limit():
    text = "a" * 298 + FAMILY + "b" * 10
    cut, truncated = truncate(text, 300)
    assert truncated
    assert FAMILY in cut or cut == "a" * 298 + ELLIPSIS
    assert "\u200d" not in cut.replace(FAMILY, "")


def test_mastodon_counts_urls_as_23_and_remote_mentions_as_local():
    url = "https://example.com/" + "x" * 100
    assert mastodon_length(url) == 23
    assert mastodon_length("hi @alice@social.example") == len("hi @alice")
    assert mastodon_length(FAMILY) == 1


def test_truncation_never_cuts_a_url_in_half():
    url = "https://example.com/a/long/path"
    text = "word " * 95 + url + " tail" * 20
    cut, truncated = truncate(text, 500, mastodon_length)
    assert truncated
    assert mastodon_length(cut) <= 500
    assert "https://" not in cut or url in cut


def test_x_weighted_length():
    assert x_weighted_length("a" * 280) == 280
    assert x_weighted_length("字" * 140) == 280
    assert x_weighted_length(FAMILY) == 2
    assert x_weighted_length("see https://example.com/" + "x" * 80) == 4 + 23
    cut, truncated = truncate("字" * 200, 280, x_weighted_length)
    assert truncated and x_weighted_length(cut) <= 280 and cut.startswith("字" * 139)
