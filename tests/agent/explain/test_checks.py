"""The deterministic checks: bullet count, citations present and real, no restating the post."""

from agent.explain.checks import RESTATE_THRESHOLD, citation_validity, problems, similarity
from agent.explain.sources import SourceBook

POST = "vibe coded the MVP over the weekend, accept all, no diffs. ship it"


def book_of(n):
    book = SourceBook()
    for i in range(n):
        book.add({"id": f"at://did:plc:x/app.bsky.feed.post/{i}", "author": "a.test", "text": f"source {i}"})
    return book


GOOD = [
    "Vibe coding is Karpathy's 2025 term for accepting an LLM's code unread [1].",
    "Teams worry about shipping code nobody has reviewed or can maintain [2].",
    "Unreviewed generated code has leaked secrets in real apps [3].",
]


def test_a_good_answer_has_no_problems():
    assert problems(GOOD, book_of(3), POST) == []
    assert citation_validity(GOOD, book_of(3)) == 1.0


def test_too_few_or_too_many_bullets():
    assert "there are 2 bullets" in problems(GOOD[:2], book_of(3), POST)[0]
    assert "there are 6 bullets" in problems(GOOD * 2, book_of(3), POST)[0]


def test_a_bullet_without_a_citation():
    found = problems([*GOOD[:2], "Unreviewed code leaks secrets."], book_of(3), POST)
    assert found == ["bullet 3 cites no source; add [N] for a source listed above"]


def test_a_citation_of_a_source_never_read():
    found = problems([*GOOD[:2], "Something true [7] and [3]."], book_of(3), POST)
    assert found == ["bullet 3 cites [7], which is not a source read in this run"]
    assert citation_validity([*GOOD[:2], "x [7]"], book_of(3)) == 2 / 3


def test_restating_the_post_is_caught_also_when_reworded_slightly():
    for restated in (
        POST + " [1]",
        "Vibe-coded the MVP over the weekend: accept all, no diffs [1].",
        "They vibe coded their MVP over a weekend, accepted all, no diffs, shipped it [2]",
        "accept all, no diffs, ship it: vibe coded the MVP over the weekend [1]",  # reordered
    ):
        assert similarity(restated, POST) >= RESTATE_THRESHOLD, restated
        assert any("restates the post" in p for p in problems([*GOOD[:2], restated], book_of(3), POST))


def test_background_on_the_same_topic_is_not_a_restatement():
    assert all(similarity(bullet, POST) < RESTATE_THRESHOLD for bullet in GOOD)


def test_no_citations_is_zero_validity():
    assert citation_validity(["no cites here"], book_of(3)) == 0.0
