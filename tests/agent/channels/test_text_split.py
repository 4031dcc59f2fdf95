"""Splitting long replies for Telegram's 4,096-character limit."""

from __future__ import annotations

import re

import pytest

from agent.channels.text_split import TELEGRAM_MESSAGE_LIMIT, split_message, utf16_length


def squash(text):
    return re.sub(r"\s+", "", text)


def test_short_text_is_one_chunk_and_blank_text_none():
    assert split_message("  hello  ") == ["hello"]
    assert split_message(" \n\n ") == []


def test_paragraphs_are_preferred():
    text = "First paragraph. It has two sentences.\n\nSecond paragraph here."
    assert split_message(text, 45) == ["First paragraph. It has two sentences.", "Second paragraph here."]


def test_then_sentences():
    text = "One sentence here. Another one! A third? Yes."
    assert split_message(text, 30) == ["One sentence here.", "Another one! A third? Yes."]
    assert split_message("He said (it works.) Then left.", 22) == ["He said (it works.)", "Then left."]


def test_then_words():
    assert split_message("alpha beta gamma delta", 11) == ["alpha beta", "gamma delta"]


def test_a_single_10000_character_word_is_cut_hard():
    word = "x" * 10_000
    chunks = split_message(word)
    assert [len(c) for c in chunks] == [4096, 4096, 10_000 - 2 * 4096]
    assert "".join(chunks) == word


def test_every_chunk_fits_and_nothing_is_lost_or_reordered():
    sentences = [f"Sentence number {n} says something {'long ' * (n % 13)}and ends." for n in range(900)]
    text = "\n\n".join(" ".join(sentences[i:i + 7]) for i in range(0, 900, 7))
    chunks = split_message(text)
    assert len(chunks) > 2
    assert all(0 < utf16_length(c) <= TELEGRAM_MESSAGE_LIMIT for c in chunks)
    assert squash("".join(chunks)) == squash(text)
    assert all(c.endswith(".") for c in chunks)  # every cut fell on a sentence end


def test_length_is_counted_like_telegram_in_utf16_units():
    emoji = "😀" * 3000  # 6000 UTF-16 units
    chunks = split_message(emoji)
    assert [utf16_length(c) for c in chunks] == [4096, 6000 - 4096]
    assert "".join(chunks) == emoji


def test_bad_limit():
    with pytest.raises(ValueError):
        split_message("x", 0)
