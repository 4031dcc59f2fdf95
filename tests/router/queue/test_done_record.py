"""The done record is built around the reply's JSON as pushed: the same bytes as encoding the
record whole, read back as the same reply, and a secret in the reply is in neither."""

from __future__ import annotations

import json

import pytest

from protocol.replies import Reply, Status
from router.queue.results import REPLY_JSON, done_record
from router.redaction import Redactor

SECRET = "planted-" + "record-secret-0123456789"


@pytest.mark.parametrize("reply", [
    Reply("c1", Status.OK, "posted", result={"url": "https://example.test/@me/1", "n": [1, 2.5, None, True]}),
    Reply("c2", Status.UNKNOWN, "été — 投稿 \\ \"quoted\"\n", error="request_failed", extra={"retry_after": 5}),
    Reply("c3", Status.DENIED, "", error="paced", extra={"retry_after": 12.0}),
])
@pytest.mark.parametrize("ts", [1_795_867_200.123456, 0.1, 1e16])
def test_the_record_is_what_encoding_it_whole_gives(reply, ts):
    safe = reply.to_dict()
    assert done_record(REPLY_JSON.encode(safe), ts) == REPLY_JSON.encode({"state": "done", "reply": safe, "ts": ts})
    assert Reply.from_json(json.dumps(json.loads(done_record(REPLY_JSON.encode(safe), ts))["reply"])) == reply


def test_a_secret_in_the_reply_is_not_in_the_record():
    redactor = Redactor([SECRET])
    reply = Reply("c4", Status.OK, f"posted with {SECRET}", result={"echo": SECRET[:12] + "\n" + SECRET[12:]})  # wrapped
    text = redactor.text(REPLY_JSON.encode(redactor.value(reply.to_dict())))
    record = done_record(text, 1.0)
    assert SECRET not in record and SECRET[12:] not in record
    assert json.loads(record)["state"] == "done"
