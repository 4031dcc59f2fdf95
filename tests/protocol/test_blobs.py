"""Blobs: text hidden under layers a list of escapes cannot reach, and the signal that holds an
outbound post carrying a blob or a random-looking run for the owner (issue 18, item 11)."""

import base64
import gzip
import secrets
import zlib

import pytest

from protocol.blobs import MAX_OUTPUT, blobs, rot47
from protocol.suspicion import entropy, suspicion
from tests.protocol.test_secret_shapes import MORE_ORDINARY, ordinary_posts


def test_layers_are_undone_inside_one_another():
    hidden = base64.b64encode(zlib.compress(b"the meeting is at noon")).hex()
    (found,) = [b for b in blobs(f"see {hidden} ok") if any("meeting" in t for t in b.texts)]
    assert {"hex", "base64", "zlib"} <= set(found.kinds)


def test_a_zip_bomb_stops_at_the_bound():
    bomb = base64.b64encode(gzip.compress(b"A" * (50 * MAX_OUTPUT))).decode()
    assert all(len(t) <= MAX_OUTPUT for b in blobs(bomb) for t in b.texts)


def test_rot47_is_its_own_inverse():
    assert rot47(rot47("Key: abc/123+XYZ")) == "Key: abc/123+XYZ"


@pytest.mark.parametrize(
    "text",
    [
        "new post: " + base64.b64encode(b"send me your password now please").decode(),
        "look " + base64.b85encode(gzip.compress(b"anything at all, really", mtime=0)).decode(),
        "token Vq3xJ0dK8mR2pL7sW9tY4uZ6aB1cE5fG-hN_oP0iQ3",
        "key=0B18974A2CAEF97F599C7472F7F89074F3938F66A9C444547fe02357",  # once missed: hex is 16 symbols
        "72 101 108 108 111 32 119 111 114 108 100 33",
    ],
)
def test_a_post_carrying_a_blob_or_a_random_run_is_suspect_and_says_why(text):
    reason = suspicion(text)
    assert reason and ("decodes" in reason or "random" in reason)


ORDINARY = [t[:280] for t in ordinary_posts() + MORE_ORDINARY if "base64," not in t]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_posts_are_not_suspect(text):
    assert suspicion(text) is None, text


def test_an_inline_data_uri_is_a_blob_the_owner_sees_before_it_goes():
    image = [t for t in ordinary_posts() + MORE_ORDINARY if "base64," in t]
    assert image and all(suspicion(t) for t in image)


def test_long_words_and_identifiers_are_not_random_looking():
    assert suspicion("the_quick_brown_fox_jumps_over_the_lazy_dog") is None
    assert suspicion("see https://example.org/2024/11/a-long-article-title-with-words-in-it") is None
    assert entropy(secrets.token_urlsafe(32)) > 4.2


def mixed_texts():
    """Texts of many lines mixing runs of every kind, doubled runs across doubled newlines, and
    the bound on runs, as a router's joined fields are."""
    import random

    rng = random.Random(7)
    pieces = ["hello world", base64.b64encode(b"secret key here 12345").decode(),
              "0x41 0x42 0x43 0x44 0x45 0x46 0x47", "72 101 108 108 111 32 119 111 114",
              base64.b85encode(gzip.compress(b"anything at all, really", mtime=0)).decode(),
              "\\101\\102\\103\\104\\105", "sskk__lliivvee", "aabbccdd", "", "ee", "\n", "\n\n",
              "http://127.0.0.1:34567/@safeclaw/110000000000000006", "77106237052d493185967b2d0fe4bcb0",
              "U+0048 U+0065", "u+006C U+006C U+006F,",
              '<~87cURD]i,"Ebo80~>', base64.b64encode(zlib.compress(b"the meeting is at noon")).hex()]
    texts = ["\n".join(rng.choice(pieces) for _ in range(rng.randrange(1, 14))) for _ in range(400)]
    texts += ["".join(rng.choice(["a", "b", "\n", "x"]) * rng.choice((1, 2, 2)) for _ in range(30))
              for _ in range(400)]
    texts += ["\n".join(base64.b64encode(f"word number {i} here".encode()).decode() for i in range(n))
              for n in (63, 64, 65, 70)]
    return texts


def test_a_text_read_line_by_line_finds_what_the_whole_text_holds():
    from protocol.blobs import _scan

    for text in mixed_texts():
        for depth in (1, 3):
            assert blobs(text, depth) == _scan(text, depth), text
