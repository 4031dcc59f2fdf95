"""The duplicate-content guard: normalising, the trigram Dice measure, the 7-day window, races."""

from __future__ import annotations

import hashlib
import threading

import pytest

from router.bounds import Denial
from router.bounds.duplicates import DuplicateGuard, SentEntry
from router.bounds.text_trigrams import normalise, similarity, trigrams
from tests.router.bounds.bounds_helpers import NOON, PREFIX, FakeEffect, router_conn, settings

ORIGINAL = (
    "Today I read three papers on tool-using agents. The best one measured how often "
    "agents repeat themselves when nobody is watching."
)
DAY = 86400.0


def guard(**env: str) -> DuplicateGuard:
    return DuplicateGuard(settings(**env), f"{PREFIX}sent:")


def post(text: str, platform: str = "moltbook", kind: str = "post") -> FakeEffect:
    return FakeEffect(platform, kind, text, "p1" if kind == "reply" else None)


@pytest.mark.parametrize(
    "variant",
    [
        ORIGINAL,
        ORIGINAL.upper(),
        ORIGINAL.replace(" ", "   ").replace(".", "!!"),
        "\u200b".join(ORIGINAL),  # zero-width spaces between every letter
        ORIGINAL.replace("a", "\u0430").replace("o", "\u043e"),  # Cyrillic look-alikes
        ORIGINAL.replace("e", "\u00e9"),  # accents
        ORIGINAL.translate(str.maketrans("ouhn", "\u0585\u057d\u0570\u0578")),  # Armenian look-alikes
        ORIGINAL.translate(str.maketrans("hy", "\u04bb\u04af")),  # more Cyrillic ones
        ORIGINAL.translate(str.maketrans("agi", "\u0251\u0261\u0131")),  # Latin alpha, script g, dotless i
        ORIGINAL.translate(str.maketrans("aeonrst", "\u1d00\u1d07\u1d0f\u0274\u0280\ua731\u1d1b")),  # small caps
        "\uff34\uff4f\uff44\uff41\uff59" + ORIGINAL[5:],  # fullwidth letters
        "🚀 " + ORIGINAL + " ✨🔥",
        ORIGINAL.replace("three", "four"),  # one word changed
        ORIGINAL.replace("\u0020", "\u00a0"),
        "\u202e" + ORIGINAL,  # a bidi override in front
        # invisible characters that are not format characters, between every letter
        "\u034f".join(ORIGINAL),  # combining grapheme joiner
        "\ufe0f".join(ORIGINAL),  # variation selector
        "\u3164".join(ORIGINAL),  # Hangul filler
        "\u115f".join(ORIGINAL),
        "\uffa0".join(ORIGINAL),  # halfwidth Hangul filler
        "\u2800".join(ORIGINAL),  # braille blank
        "\u17b4".join(ORIGINAL),  # Khmer inherent vowel
        # visible but trivial: letters spaced out, a link added
        " ".join(ORIGINAL),
        ".".join(ORIGINAL),
        ORIGINAL + " https://example.com/" + "q7" * 20,
        "https://spam.example/landing?ref=abcdef " + ORIGINAL,
        ORIGINAL + " www.example.org/some/long/path/to/make/it/differ",
    ],
)
def test_near_copies_are_refused_as_duplicate_content(redis_urls, variant):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, post(ORIGINAL), NOON), SentEntry)
        refused = bound.take(conn, post(variant, kind="reply"), NOON + 3600)
    assert isinstance(refused, Denial), f"similarity {similarity(trigrams(ORIGINAL), trigrams(variant)):.3f}"
    assert refused.reason == "duplicate_content"
    assert refused.retry_after == 6 * DAY + 23 * 3600
    assert "similar" in refused.message


@pytest.mark.parametrize(
    "different",
    [
        "Today I read three papers on tool-using agents.",  # a part of it: well under 90%
        "A quiet Saturday: no papers, a long walk, and a bread that finally rose.",
        ORIGINAL + " Next week I will try the same measurement on my own logs and report back here.",
    ],
)
def test_different_texts_pass(redis_urls, different):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, post(ORIGINAL), NOON), SentEntry)
        assert isinstance(bound.take(conn, post(different), NOON + 60), SentEntry)


@pytest.mark.parametrize(
    "variant",
    ["Follow my new project today! https://example.com/p/1", "Follow my new project today!!! 🎉 https://t.co/x9",
     "F o l l o w  m y  n e w  p r o j e c t  t o d a y"],
)
def test_a_short_text_with_a_link_or_spacing_added_is_still_the_same_text(redis_urls, variant):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, post("Follow my new project today"), NOON), SentEntry)
        assert isinstance(bound.take(conn, post(variant), NOON + 60), Denial)


def test_the_measure_and_the_normalising():
    assert normalise("  Héllo,\u200bWORLD!! 🚀 ") == "hello world"
    assert similarity(trigrams(ORIGINAL), trigrams(ORIGINAL)) == 1.0
    one_word = similarity(trigrams(ORIGINAL), trigrams(ORIGINAL.replace("three", "four")))
    assert 0.9 <= one_word < 1.0
    assert similarity(trigrams(ORIGINAL), trigrams("Something else entirely, about bread.")) < 0.3
    assert trigrams("!!!") == trigrams("!!!") and trigrams("!!!") != trigrams("???")  # symbols only


def test_the_window_is_seven_days_and_a_threshold_can_be_set(redis_urls):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(bound.take(conn, post(ORIGINAL), NOON), SentEntry)
        assert isinstance(bound.take(conn, post(ORIGINAL), NOON + 7 * DAY - 1), Denial)
        assert isinstance(bound.take(conn, post(ORIGINAL), NOON + 7 * DAY), SentEntry)
        loose = guard(ROUTER_DUPLICATE_THRESHOLD="0.4")
        half = "Today I read three papers on tool-using agents. Nothing else to say today, really."
        assert isinstance(loose.take(conn, post(half), NOON + 7 * DAY + 1), Denial)


def test_platforms_keep_their_own_history_unless_scope_is_all(redis_urls):
    with router_conn(redis_urls.router_url) as conn:
        assert isinstance(guard().take(conn, post(ORIGINAL, "moltbook"), NOON), SentEntry)
        assert isinstance(guard().take(conn, post(ORIGINAL, "bsky"), NOON), SentEntry)
        assert isinstance(
            guard(ROUTER_DUPLICATE_SCOPE="all").take(conn, post(ORIGINAL, "x"), NOON), SentEntry
        )
        assert isinstance(
            guard(ROUTER_DUPLICATE_SCOPE="all").take(conn, post(ORIGINAL, "reddit"), NOON), Denial
        )


def test_a_released_text_can_be_sent_again_and_likes_are_not_texts(redis_urls):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        entry = bound.take(conn, post(ORIGINAL), NOON)
        assert isinstance(entry, SentEntry)
        bound.release(conn, entry)
        assert isinstance(bound.take(conn, post(ORIGINAL), NOON + 1), SentEntry)
        like = FakeEffect("moltbook", "like", None, "p1")
        assert bound.take(conn, like, NOON) is None and bound.take(conn, like, NOON) is None


def test_only_fingerprints_are_stored_with_a_ttl(redis_urls):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        bound.take(conn, post(ORIGINAL), NOON)
    admin = redis_urls.admin_client()
    try:
        key = bound.key("moltbook")
        stored = " ".join(admin.zrange(key, 0, -1))
        assert "papers" not in stored.lower() and "agents" not in stored.lower()
        assert 7 * DAY < admin.ttl(key) <= 8 * DAY
    finally:
        admin.close()


def test_racing_routers_send_a_text_at_most_once(redis_urls):
    bound = guard()
    start = threading.Barrier(6)
    passed: list[bool] = []

    def router(n: int) -> None:
        with router_conn(redis_urls.router_url) as conn:
            start.wait()
            passed.append(isinstance(bound.take(conn, post(ORIGINAL + "!" * n), NOON), SentEntry))

    threads = [threading.Thread(target=router, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(passed) == 6 and sum(passed) <= 1


def distinct(n: int) -> str:
    return f"Entry {n}: " + " ".join(hashlib.sha256(f"{n}-{k}".encode()).hexdigest()[:10] for k in range(10))


def count_reads(conn) -> list[int]:
    """How many entries each read of a history returns, from now on."""
    fetched: list[int] = []
    real_pipeline = conn.pipeline

    def pipeline(*args, **kwargs):
        pipe = real_pipeline(*args, **kwargs)
        execute = pipe.execute

        def counted():
            names = [str(args[0]).upper() for args, _options in pipe.command_stack]
            answers = execute()
            fetched.extend(len(a) for n, a in zip(names, answers, strict=True) if n.startswith("ZRANGE"))
            return answers

        pipe.execute = counted
        return pipe

    conn.pipeline = pipeline
    return fetched


def test_a_guard_keeps_what_it_read_and_sees_other_routers_sends_and_releases(redis_urls):
    """Each router's guard reads only the entries sent since its newest one; another router's
    send is still seen, and a text another router took back no longer counts."""
    mine, theirs = guard(), guard()
    texts = [distinct(n) for n in range(30)]
    with router_conn(redis_urls.router_url) as conn:
        for n, text in enumerate(texts[:20]):
            assert isinstance(mine.take(conn, post(text), NOON + n), SentEntry)
        fetched = count_reads(conn)
        assert isinstance(mine.take(conn, post(texts[20]), NOON + 21), SentEntry)
        assert fetched == []  # nothing changed but its own entry: nothing read
        # Another router sends a text; this guard refuses a copy of it.
        sent = theirs.take(conn, post(texts[21]), NOON + 22)
        assert isinstance(sent, SentEntry)
        assert isinstance(mine.take(conn, post(texts[21]), NOON + 23), Denial)
        # The other router takes it back (its post failed): the same text may go now.
        theirs.release(conn, sent)
        assert isinstance(mine.take(conn, post(texts[21]), NOON + 24), SentEntry)


def test_a_guard_reads_only_what_is_new_once_its_history_is_older_than_the_slack(redis_urls):
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        for n in range(10):
            bound.take(conn, post(distinct(100 + n)), NOON + 1000 * n)
        theirs = guard()
        assert isinstance(theirs.take(conn, post(distinct(200)), NOON + 9500), SentEntry)
        fetched = count_reads(conn)
        later = NOON + 10_000
        assert isinstance(bound.take(conn, post("A new text, nothing like the old ones at all."), later), SentEntry)
        assert isinstance(bound.take(conn, post(distinct(103)), later + 1), Denial)  # still known
    # Once: its newest old entry (within the slack), the other router's and its own; not the whole
    # week. The second check is the only change since: nothing read.
    assert fetched == [3]


def test_the_fingerprint_bound_never_hides_a_match():
    """The fingerprints' bound on the shared trigrams is never below the true count, so a pair it
    skips is below the threshold; it is tight enough to skip texts merely alike."""
    import random

    from router.bounds.fingerprints import Fingerprint

    rng = random.Random(5)
    pool = [rng.getrandbits(32) for _ in range(6000)]
    for _ in range(400):
        a = frozenset(rng.sample(pool, rng.randrange(1, 2000)))
        keep = rng.random()
        b = frozenset([g for g in a if rng.random() < keep] + rng.sample(pool, rng.randrange(0, 200)))
        bound = Fingerprint.of(a).overlap_bound(Fingerprint.of(b))
        assert bound >= len(a & b)
        if similarity(a, b) >= 0.9:
            assert 2 * bound / (len(a) + len(b)) >= 0.9
    text = frozenset(pool[:1000])
    alike = frozenset(pool[500:1500])  # half of its trigrams shared
    bound = Fingerprint.of(text).overlap_bound(Fingerprint.of(alike))
    assert 2 * bound / 2000 < 0.9


def test_texts_given_back_by_the_hundred_leave_the_others_found(redis_urls):
    """Entries taken out leave holes in the guard's columns until they are compacted; what is
    kept is still compared, and nothing given back is."""
    bound = guard()
    with router_conn(redis_urls.router_url) as conn:
        kept = [distinct(300 + n) for n in range(40)]
        for n, text in enumerate(kept):
            assert isinstance(bound.take(conn, post(text), NOON + n), SentEntry)
        for n in range(150):
            entry = bound.take(conn, post(distinct(500 + n)), NOON + 100 + n)
            assert isinstance(entry, SentEntry)
            bound.release(conn, entry)
        assert all(isinstance(bound.take(conn, post(t), NOON + 400), Denial) for t in kept[::7])
        assert isinstance(bound.take(conn, post(distinct(520)), NOON + 401), SentEntry)  # given back


def test_ascii_texts_skip_the_unicode_steps_and_come_out_the_same():
    """ASCII text skips NFKC, NFKD and the invisible-character pass (and its trigrams are sliced
    from bytes); a zero-width space added sends the same text through every step, and it must come
    out the same."""
    import random
    import string

    rng = random.Random(11)
    for _ in range(2000):
        text = "".join(rng.choice(string.printable) for _ in range(rng.randrange(0, 80)))
        if rng.random() < 0.2:
            text += " https://example.com/" + text[:10]
        assert normalise(text + "\u200b") == normalise(text), repr(text)
        assert trigrams(text + "\u200b") == trigrams(text) or not normalise(text), repr(text)


def test_a_text_another_router_took_back_is_dropped_without_reading_the_whole_history(redis_urls):
    mine, theirs = guard(), guard()
    with router_conn(redis_urls.router_url) as conn:
        for n in range(30):
            assert isinstance(mine.take(conn, post(distinct(700 + n)), NOON + 1000 * n), SentEntry)
        later = NOON + 40_000
        sent = theirs.take(conn, post(distinct(800)), later)  # theirs reads the history once here
        assert isinstance(sent, SentEntry)
        assert isinstance(mine.take(conn, post(distinct(800)), later + 1), Denial)  # mine sees it
        theirs.release(conn, sent)  # their post failed: the text is given back
        fetched = count_reads(conn)
        assert isinstance(mine.take(conn, post(distinct(800)), later + 2), SentEntry)
        assert isinstance(mine.take(conn, post(distinct(729)), later + 3), Denial)  # the rest still kept
    assert fetched == [1]  # its own entry, sent since its newest; not the 31 names of the week again
