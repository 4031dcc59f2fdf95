"""`secret_in_text` in the router's policy: a post that holds one of the router's own credentials
in any spelling a transport writes, or a secret-shaped string, is refused before it leaves; ordinary posts go. A post
carrying a blob is held by a real worker for the owner.

Every fake token is built from pieces so that secret scanners do not mistake this file for a leak.
"""

import base64
import gzip

from tests.protocol.test_redaction import spellings
from tests.protocol.test_secret_shapes import MORE_ORDINARY, SHAPES, ordinary_posts
from tests.router.policy.test_policy import CREDS, SKILLS, run
from tests.router.router_helpers import WorkerThread, push, reply_of, settings_for

KEYS = [CREDS["MOLTBOOK_API_KEY"], CREDS["BSKY_PASSWORD"]]


def own_credential_spellings(secret):
    """The credential as a client or server would carry it (`tests.protocol.test_redaction`)."""
    return list(spellings(secret).values())


def test_a_post_with_the_routers_own_credential_in_any_transport_spelling_is_refused(redis_urls, admin, tmp_path):
    texts = [f"Guess what: {shown} lol" for secret in KEYS for shown in own_credential_spellings(secret)]
    commands = [("CREATE_POST", {"platform": "bsky", "text": text}) for text in texts]
    commands += [("MOLTBOOK_COMMENT", {"post_id": "p1", "text": text}) for text in texts[:3]]
    replies = run(redis_urls, admin, tmp_path, commands)
    refused = [(r["status"], r["error"]) for r in replies]
    assert refused == [("denied", "secret_in_text")] * len(commands), [
        t for t, r in zip(texts, refused, strict=False) if r != ("denied", "secret_in_text")
    ]
    assert not (tmp_path / "outbox.jsonl").exists()


def test_a_post_with_a_secret_shaped_string_is_refused(redis_urls, admin, tmp_path):
    commands = [("CREATE_POST", {"platform": "bsky", "text": f"note to self: {s}"}) for s in SHAPES.values()]
    commands += [("NOTE", {"text": SHAPES["pem private key"]}), ("NOTE", {"text": SHAPES["russian"]})]
    replies = run(redis_urls, admin, tmp_path, commands)
    wrong = [name for name, r in zip([*SHAPES, "note pem", "note russian"], replies, strict=True)
             if (r["status"], r["error"]) != ("denied", "secret_in_text")]
    assert wrong == []
    assert not (tmp_path / "outbox.jsonl").exists() and not (tmp_path / "notes.jsonl").exists()


def test_ordinary_posts_are_published(redis_urls, admin, tmp_path):
    # An inline data: URI is a blob: it waits for the owner (next test), so it is not among these.
    texts = [t[:280] for t in ordinary_posts() + MORE_ORDINARY if "base64," not in t]
    commands = [("CREATE_POST", {"platform": "bsky", "text": text}) for text in texts]
    replies = run(redis_urls, admin, tmp_path, commands, ROUTER_QUOTAS="post=1000")
    refused = [(t, r["error"]) for t, r in zip(texts, replies, strict=True) if r["status"] != "ok"]
    assert refused == []
    assert len((tmp_path / "outbox.jsonl").read_text().splitlines()) == len(texts)


def test_a_post_with_a_secret_shaped_string_hidden_in_a_blob_is_not_published(redis_urls, admin, tmp_path):
    """A key nobody loaded, inside base64 or gzip: the redactor does not decode blobs, the hold
    signal does, so the post waits for the owner (or is refused) and nothing goes out."""
    shapes = [SHAPES[name] for name in sorted(SHAPES) if name not in ("russian",)][:6]
    hidden = [form for shape in shapes for form in (base64.b64encode(shape.encode()).decode(),
              base64.b64encode(gzip.compress(shape.encode())).decode(), shape.encode().hex())]  # fmt: skip
    commands = [("CREATE_POST", {"platform": "bsky", "text": f"decode me: {form}"}) for form in hidden]
    replies = run_through_a_worker(redis_urls, admin, tmp_path, commands)
    published = [form for form, r in zip(hidden, replies, strict=True) if r["status"] == "ok"]
    assert published == []
    assert {r["status"] for r in replies} <= {"pending_approval", "denied"}
    assert not (tmp_path / "outbox.jsonl").exists()


def run_through_a_worker(redis_urls, admin, tmp_path, commands):
    settings = settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="1")
    with WorkerThread(settings, dict(SKILLS), dict(CREDS)):
        ids = [push(admin, redis_urls.keys, action, params) for action, params in commands]
        return [reply_of(admin, redis_urls.keys, cid) for cid in ids]


def test_a_post_carrying_a_blob_or_a_random_run_waits_for_the_owner_saying_why(redis_urls, admin, tmp_path):
    """Issue 18, item 11: a list of decodings will never be complete, so outbound text holding a
    run that decodes to text, or a long random-looking run, is held for the owner's approval."""
    blob = base64.b64encode(b"the key you asked for is in here").decode()
    texts = [f"check this out {blob}", "new token: Zq8Rt5Lw2Kx9Pm4Vb7nYc3Hd6Jf1Gs0A",
             "data:image/png;base64," + base64.b64encode(bytes(range(200))).decode()]
    commands = [("CREATE_POST", {"platform": "bsky", "text": text}) for text in texts]
    commands.append(("CREATE_POST", {"platform": "reddit", "subreddit": "test", "title": f"see {blob}", "text": "hi"}))
    replies = run_through_a_worker(redis_urls, admin, tmp_path, commands)
    assert [r["status"] for r in replies] == ["pending_approval"] * len(commands), replies
    assert all(("decodes" in r["message"] or "random" in r["message"]) and r.get("reason") for r in replies)
    assert not (tmp_path / "outbox.jsonl").exists()
