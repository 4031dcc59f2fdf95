"""Speed of the one redactor (`protocol.redaction`) on the texts a router sees every command.

    .venv/bin/python bench/redaction.py [--label NAME] [--against GIT_REV]

Loads the redactor with six secrets shaped like a router's (platform keys, an app password, an
LLM key, the Redis password) and times, in µs per call: the reply value and texts of one PING,
a log line, a post checked by `secret_in_text`, a profile reply, a 2 KB feed reply, a reply that
does hold a secret (the slow path), and building a redactor. With --against, the redactor of
that git revision is timed too, round by round beside this one, so a busy machine slows both
alike. Prints the figures and writes bench/results/redaction.json (keyed by --label).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol import redaction  # noqa: E402
from protocol.replies import Reply, Status  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "redaction.json"
SECRETS = [
    "moltbook_sk_" + "Zq8Rt5Lw2Kx9Pm4Vb7",
    "bsky-app-" + "pass-9f3k-2lm8",
    "r3ddit-" + "S3cret-Value-77",
    "masto-" + "tok-" + "AbCdEf0123456789",
    "sk-" + "proj-" + "n0tR3alButL0ngEnough1234",
    "redis-" + "router-pw-" + "x81b",
]
PING = Reply("cmd-0123456789abcdef", Status.OK, "pong", result={"router": "router-1", "time": 1732312345.5})
POST = (
    "Just finished my morning run, 10k in under an hour for the first time! Thanks to everyone "
    "who cheered me on at https://example.org/runs/2024/11/22?ref=feed#top - next goal: a half "
    "marathon in spring. Colours of the day: #ff8800 and #00aaff. 🏃‍♀️"
)
PROFILE = Reply(
    "cmd-fedcba9876543210",
    Status.OK,
    "profile of moltbook",
    result={
        "platform": "moltbook",
        "profile": {
            "name": "safeclaw",
            "karma": 42,
            "bio": "A careful agent.",
            "followers": 17,
            "avatar": "https://cdn.example.org/a/0f3c9e.png",
            "created": "2024-11-01T10:00:00Z",
        },
    },
)
FEED = Reply(
    "cmd-00112233445566778899",
    Status.OK,
    "20 posts",
    result={
        "posts": [
            {"id": f"p{i}", "author": f"user{i}", "text": POST[: 60 + i], "likes": i} for i in range(20)
        ]
    },
)


def per_call(fn: Callable[[], Any], seconds: float = 0.4) -> float:
    """Median over five rounds of µs per call, in CPU time of this process (other jobs on a
    shared machine then slow it less than they slow the wall clock)."""
    rounds = []
    for _ in range(5):
        calls, started = 0, time.process_time()
        while (elapsed := time.process_time() - started) < seconds / 5:
            for _ in range(20):
                fn()
            calls += 20
        rounds.append(elapsed / calls * 1e6)
    return round(sorted(rounds)[2], 2)


def redaction_at(rev: str) -> Any:
    """`protocol/redaction.py` as it was at a git revision (beside this tree's other protocol modules)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:protocol/redaction.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "redaction_then.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("redaction_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["redaction_then"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def first_build(module: Any) -> None:
    """A redactor for secrets never seen before (the tables of known secret sets are cached)."""
    tables = getattr(module, "build_needles", None) or getattr(module, "build_tables", None)
    if tables is not None:
        tables.cache_clear()
    module.Redactor(SECRETS)


def measure(module: Any) -> dict[str, Any]:
    redactor = module.Redactor(SECRETS)
    ping = PING.to_dict()
    ping_json = PING.to_json()
    leaked = Reply("cmd-1", Status.OK, "ok", result={"agent": f"agent {SECRETS[0]} here"}).to_dict()
    log_line = "command cmd-0123456789abcdef PING done in 0.21 ms (status ok, router router-1)"

    def one_ping() -> None:  # what a PING reply goes through: the value, then its JSON twice
        safe = redactor.value(ping)
        redactor.text(json.dumps(safe, ensure_ascii=False))
        redactor.text(json.dumps({"state": "done", "reply": safe, "ts": 1.0}, ensure_ascii=False))

    return {
        "ping_reply_all_passes_us": per_call(one_ping),
        "ping_reply_value_us": per_call(lambda: redactor.value(ping)),
        "ping_reply_json_text_us": per_call(lambda: redactor.text(ping_json)),
        "log_line_text_us": per_call(lambda: redactor.text(log_line)),
        "post_finds_us": per_call(lambda: redactor.finds(POST)),
        "profile_reply_value_us": per_call(lambda: redactor.value(PROFILE.to_dict())),
        "feed_reply_2kb_value_us": per_call(lambda: redactor.value(FEED.to_dict())),
        "reply_holding_a_secret_value_us": per_call(lambda: redactor.value(leaked)),
        "build_redactor_us": per_call(lambda: module.Redactor(SECRETS), seconds=1.0),
        "build_redactor_uncached_us": per_call(lambda: first_build(module), seconds=1.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="current")
    parser.add_argument("--against", help="a git revision whose redactor is timed alongside")
    args = parser.parse_args()
    then = redaction_at(args.against) if args.against else None
    rounds = [(measure(redaction), measure(then) if then else {}) for _ in range(3)]
    figures = {name: min(now[name] for now, _ in rounds) for name in rounds[0][0]}
    before = {name: min(old[name] for _, old in rounds) for name in rounds[0][1]}
    print(f"{'µs per call (best of 3 rounds)':36} {'now':>10} {args.against or '':>10}")
    for name, value in figures.items():
        print(f"{name:36} {value:10.2f} {before.get(name, ''):>10}")
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    saved[args.label] = {"secrets": len(SECRETS), **figures}
    if then:
        saved[args.label]["against"] = {"rev": args.against, **before}
    RESULTS.write_text(json.dumps(saved, indent=2) + "\n")
    print(f"saved to {RESULTS.relative_to(ROOT)} under {args.label!r}")


if __name__ == "__main__":
    main()
