"""Ranking candidates by likelihood, on a tiny model whose probabilities are written down."""

import math

import pytest

from agent.llm.local.ranking import continuation_logprobs, log_softmax, rank, score, sequence_logprobs

VOCAB = 6


class TableModel:
    """A causal model over tokens 0..5: the next token's probabilities depend on the last token
    only, from a written table. Counts what it evaluates, so sharing can be checked."""

    def __init__(self, table, context):
        self.table = table
        self.tokens = list(context)
        self.fed = 0

    def position(self):
        return len(self.tokens)

    def rewind(self, position):
        assert 0 <= position <= len(self.tokens)
        del self.tokens[position:]

    def next_logprobs(self):
        return [math.log(p) for p in self.table[self.tokens[-1]]]

    def feed(self, tokens):
        rows = []
        for token in tokens:
            self.tokens.append(token)
            self.fed += 1
            rows.append(self.next_logprobs())
        return rows


def uniform():
    return [1 / VOCAB] * VOCAB


TABLE = {
    0: [0.05, 0.5, 0.3, 0.05, 0.05, 0.05],  # after the context's last token 0: 1 likely, then 2
    1: [0.05, 0.05, 0.05, 0.7, 0.1, 0.05],  # after 1: 3 likely
    2: [0.05, 0.05, 0.05, 0.05, 0.75, 0.05],  # after 2: 4 likely
    3: uniform(),
    4: uniform(),
    5: uniform(),
}


def test_each_candidate_gets_the_log_probability_of_each_of_its_tokens_and_the_context_is_kept():
    model = TableModel(TABLE, [5, 0])
    found = continuation_logprobs(model, {"a": [1, 3], "b": [2, 4], "c": [1]})
    assert found["a"] == pytest.approx([math.log(0.5), math.log(0.7)])
    assert found["b"] == pytest.approx([math.log(0.3), math.log(0.75)])
    assert found["c"] == pytest.approx([math.log(0.5)])
    assert model.tokens == [5, 0]  # rewound to the context


def test_candidates_sharing_leading_tokens_are_evaluated_once():
    model = TableModel(TABLE, [0])
    continuation_logprobs(model, {"x": [1, 3, 5], "y": [1, 3, 4], "z": [1, 2]})
    assert model.fed == 2  # 1 then 3, once; no candidate's last token is ever fed


def test_an_empty_candidate_is_an_error():
    with pytest.raises(ValueError):
        continuation_logprobs(TableModel(TABLE, [0]), {"empty": []})


def test_sequence_logprobs_scores_a_whole_sequence():
    model = TableModel(TABLE, [0])
    assert sequence_logprobs(model, [2, 4, 0]) == pytest.approx(
        [math.log(0.3), math.log(0.75), math.log(1 / VOCAB)]
    )
    assert sequence_logprobs(model, []) == []


def test_sum_favours_short_candidates_and_mean_does_not():
    logprobs = {"short": [-2.0], "long": [-1.5, -1.0, -1.0]}
    assert [r.name for r in rank(logprobs, "sum")] == ["short", "long"]
    assert [r.name for r in rank(logprobs, "mean")] == ["long", "short"]
    assert score([-1.5, -1.0, -1.0], "mean") == pytest.approx(-3.5 / 3)


def test_calibration_removes_what_the_model_likes_whatever_the_message():
    # "chat" is likelier in the message's context, but it is likelier still with no message at all:
    # the message made "post" gain the most.
    logprobs = {"chat": [-1.0], "post": [-2.0]}
    content_free = {"chat": [-0.5], "post": [-4.0]}
    ranked = rank(logprobs, "sum", content_free)
    assert [r.name for r in ranked] == ["post", "chat"]
    assert ranked[0].score == pytest.approx(2.0) and ranked[0].raw == pytest.approx(-2.0)
    assert rank(logprobs, "sum")[0].name == "chat"


def test_ties_keep_the_order_given():
    assert [r.name for r in rank({"b": [-1.0], "a": [-1.0]}, "sum")] == ["b", "a"]


def test_log_softmax_is_a_distribution():
    values = log_softmax([1.0, 2.0, 3.0])
    assert math.fsum(math.exp(v) for v in values) == pytest.approx(1.0)
    assert values[2] - values[1] == pytest.approx(1.0)
