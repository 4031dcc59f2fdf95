"""Redaction once per distinct content (`router.queue.redaction_memo`): a reply's text and an audit
entry come out as the redactor makes them whole, whatever secret spelling they hold, but for the
command id, which is the sender's own and left as sent; what repeats is redacted once."""

from __future__ import annotations

import base64
import json

import pytest

from protocol.replies import Reply, Status
from router.queue.redaction_memo import REPLY_JSON, RedactionMemo
from router.redaction import Redactor

KEY = "moltbook_sk_" + "Memo7f9Kq2Zx4Wb8"


class Counting(Redactor):
    def __init__(self, secrets):
        super().__init__(secrets)
        self.calls = 0

    def value(self, value):
        self.calls += 1
        return super().value(value)

    def text(self, text):
        self.calls += 1
        return super().text(text)


def whole(redactor, reply):
    """The reply as the router redacted it before: both passes over the reply with its id."""
    return redactor.text(REPLY_JSON.encode(redactor.value(reply.to_dict())))


REPLIES = [
    Reply("c1", Status.OK, "", result={"pong": True, "router_id": "r1"}),
    Reply("5b684bf7065047e698c29a488ef7cda8", Status.OK, f"echo {KEY}", result={"n": 1}),
    Reply("c.2-x_y", Status.OK, "a", result={"name": KEY[:10], "bio": KEY[10:]}),  # cut across fields
    Reply("c3", Status.OK, "b", result={"b64": base64.b64encode(KEY.encode()).decode()}),
    Reply("c4", Status.ERROR, "failed", error="request_failed", extra={"codes": [ord(c) for c in KEY]}),
    Reply("c5", Status.OK, KEY[::-1], result={"items": [{"t": KEY[:9]}, {"t": KEY[9:]}]}),
]


@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: r.id)
def test_a_reply_comes_out_as_redacted_whole(reply):
    redactor = Redactor([KEY])
    memo = RedactionMemo(redactor)
    text = memo.reply_text(reply)
    assert text == whole(redactor, reply)
    assert "Memo7f9Kq2Zx4Wb8" not in text
    assert ", ".join(str(ord(c)) for c in KEY[12:20]) not in text  # the key as character codes too
    assert memo.reply_text(reply) == text  # and again, from what it remembered


def test_what_repeats_but_for_the_id_is_redacted_once():
    redactor = Counting([KEY])
    memo = RedactionMemo(redactor)
    texts = [memo.reply_text(Reply(f"c{i}", Status.OK, f"echo {KEY}")) for i in range(20)]
    assert redactor.calls == 2  # one value pass, one text pass: for the first reply only
    assert [json.loads(t)["id"] for t in texts] == [f"c{i}" for i in range(20)]
    assert all(KEY not in t for t in texts)
    memo.reply_text(Reply("c99", Status.OK, "something else"))
    assert redactor.calls == 4


def test_the_id_is_left_as_sent_and_the_rest_still_found_on_its_own():
    # An id holding the first part of the key: the sender's own; the rest, 8+ characters, is redacted.
    memo = RedactionMemo(Redactor([KEY]))
    own = KEY[:12].replace("_", "-")
    text = memo.reply_text(Reply(own, Status.OK, KEY[12:]))
    assert json.loads(text)["id"] == own and KEY[12:] not in text


@pytest.mark.parametrize("odd_id", ["", "has space", "x" * 200, "quote\"d", None])
def test_an_id_that_is_not_a_command_id_is_redacted_with_the_rest(odd_id):
    memo = RedactionMemo(Redactor([KEY]))
    assert memo.reply_text(Reply(odd_id, Status.OK, KEY)) is None  # the caller redacts it whole
    entry = {"command_id": odd_id, "text": f"post {KEY}"}
    assert memo.value(entry, "command_id") == Redactor([KEY]).value(entry)


def test_an_audit_entry_comes_out_as_redacted_whole_but_its_id_and_is_a_fresh_copy():
    redactor = Counting([KEY])
    memo = RedactionMemo(redactor)
    entry = {"command_id": "c1", "action": "CREATE_POST", "origin": {"channel": "telegram"},
             "text": f"look {base64.b64encode(KEY.encode()).decode()}", "message": KEY}
    first = memo.value(entry, "command_id")
    assert first == Redactor([KEY]).value(entry)
    first["origin"]["channel"] = "changed by a caller"
    second = memo.value({**entry, "command_id": "c2"}, "command_id")
    assert second == {**Redactor([KEY]).value(entry), "command_id": "c2"}
    assert redactor.calls == 1
    assert list(second) == list(entry)  # the same order of keys


def test_a_writes_line_is_redacted_each_time_not_kept():
    """A line with what a write published never repeats (a repeat post is refused): remembering it
    would only cost its encoding."""
    redactor = Counting([KEY])
    memo = RedactionMemo(redactor)
    entry = {"command_id": "c1", "action": "CREATE_POST", "text": "hello", "payload": {"title": KEY}}
    first = memo.value(entry, "command_id")
    second = memo.value({**entry, "command_id": "c2"}, "command_id")
    assert first == Redactor([KEY]).value(entry)
    assert second == {**first, "command_id": "c2"} and redactor.calls == 2
    assert list(second) == list(entry)


def test_long_contents_are_not_kept():
    redactor = Counting([KEY])
    memo = RedactionMemo(redactor)
    long = Reply("c1", Status.OK, "x" * 5000)
    assert memo.reply_text(long) is None
    entry = {"command_id": "c1", "text": "y" * 5000 + KEY}
    for _ in range(2):
        assert memo.value(entry, "command_id") == Redactor([KEY]).value(entry)
    assert redactor.calls == 2
