"""The least a router must do for one post, with no check or logic of its own: the invariants' I/O.

A worker process (`python bench/post_skeleton.py REDIS_URL QUEUE INSTANCE TOKEN FOLDER`) that,
per command: takes it with BLMOVE into a processing list (never only in memory), reads its record
and the kill switch and claims it in one round trip (at most once), appends an audit line and
fdatasyncs it (audit before effect), posts with a kept Mastodon.py client, then stores the record,
pushes the reply and drops the command in one round trip. No decoding beyond JSON, no policy,
no redaction, no bounds: `bench/router_post.py` sets it beside the floor and the router to show how
much of the distance to the floor is the invariants' own round trips and disk flush.
"""

from __future__ import annotations

import json
import os
import sys

import redis
from mastodon import Mastodon


def serve(url: str, queue: str, instance: str, token: str, folder: str) -> None:
    conn = redis.Redis.from_url(url)
    api = Mastodon(api_base_url=instance, access_token=token, version_check_mode="none")
    audit = os.open(os.path.join(folder, "skeleton.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    processing = f"{queue}:skeleton-processing"
    while True:
        raw = conn.blmove(queue, processing, 1, "RIGHT", "LEFT")
        if raw is None:
            continue
        command = json.loads(raw)
        if command.get("action") == "STOP":
            return
        record = f"skeleton:record:{command['id']}"
        pipe = conn.pipeline(transaction=False)
        pipe.get(record)
        pipe.get("skeleton:kill_switch")
        pipe.set(f"{record}:claim", "started", nx=True, ex=3600)
        pipe.execute()
        os.write(audit, json.dumps({"id": command["id"], "status": "started",
                                    "text": command["params"]["text"]}).encode() + b"\n")
        os.fdatasync(audit)
        status = api.status_post(command["params"]["text"])
        reply = json.dumps({"id": command["id"], "status": "ok", "result": {"url": status["url"]}})
        pipe = conn.pipeline(transaction=False)
        pipe.set(record, reply, ex=3600)
        pipe.lpush(f"skeleton:reply:{command['id']}", reply)
        pipe.expire(f"skeleton:reply:{command['id']}", 60)
        pipe.lrem(processing, 1, raw)  # type: ignore[arg-type]  # redis-py takes bytes
        pipe.execute()


if __name__ == "__main__":
    serve(*sys.argv[1:6])
