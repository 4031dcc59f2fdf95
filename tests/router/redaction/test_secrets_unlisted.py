"""Wave 3, second round of secrets: the router's own key in spellings no table lists (uuencode,
bits, Morse, Braille, look-alike alphabets, code points) and in a link's path or host is never
published: refused when the redactor knows the spelling, else held for the owner with the reason.
A link the owner typed is theirs, however random its id looks; the same link from autonomy waits.

Policy decides on a real redis-server (`tests.router.policy.test_policy.run` with dry run on), so an
allowed write lands in the outbox and nothing leaves for a platform.
"""

import base64

from protocol.commands import CommandEnvelope
from protocol.origin import AUTONOMY, Origin, owner
from router.pipeline import Pipeline, Planned
from router.policy.checks import Policy
from router.queue.redis_io import connect
from router.redaction import Redactor
from router.registry import SkillContext
from tests.protocol.test_suspicion import base58, unlisted_spellings
from tests.router.policy.test_policy import CREDS, SKILLS
from tests.router.router_helpers import settings_for

KEY = CREDS["MOLTBOOK_API_KEY"]
DOC = "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit"


def decide(redis_urls, tmp_path, commands, credentials=CREDS):
    """(status, error, message) of each (params, origin) CREATE_POST, as the router answers it."""
    config = settings_for(redis_urls.router_url, tmp_path, ROUTER_DRY_RUN="1", ROUTER_QUOTAS="post=1000")
    redactor = Redactor(list(credentials.values()))
    policy = Policy(config, SKILLS, redactor)
    pipeline = Pipeline(SKILLS, policy, redactor)
    conn = connect(config)
    answers = []
    try:
        for params, origin in commands:
            envelope = CommandEnvelope.new("CREATE_POST", params, "t", ttl_seconds=60, origin=origin)
            planned = pipeline.plan(envelope)
            assert isinstance(planned, Planned), planned
            reply = pipeline.check(planned, conn)
            if reply is None:
                context = SkillContext(envelope.id, "t", credentials, {}, config.data_dir, dry_run=True)
                reply = pipeline.run(planned, context).reply
            policy.record(planned.effect, planned.envelope, reply, conn)
            answers.append((str(reply.status), reply.error, reply.message))
    finally:
        conn.close()
    return answers


def test_the_routers_key_in_a_spelling_no_table_lists_is_never_published(redis_urls, admin, tmp_path):
    spelled = unlisted_spellings(KEY)
    commands = [({"platform": "bsky", "text": f"fun fact: {form} :)"}, owner("console")) for form in spelled.values()]
    answers = decide(redis_urls, tmp_path, commands)
    published = [name for name, (status, _, _) in zip(spelled, answers, strict=True) if status == "ok"]
    assert published == []
    assert all(error in ("secret_in_text", "approval_required") for _, error, _ in answers), answers
    assert not (tmp_path / "outbox.jsonl").exists()


def test_the_routers_key_in_a_links_path_host_or_query_waits(redis_urls, admin, tmp_path):
    """Whole or cut in two, its base58 looks random; folded to lower case it still does: the
    post waits for the owner, saying so."""
    raw = KEY.encode()
    links = [
        f"https://example.com/p/{base58(raw)}",
        f"https://example.com/{base58(raw[:12])}/{base58(raw[12:])}",
        f"https://{base58(raw).lower()[:40]}.example.com/",
    ]
    commands = [({"platform": "bsky", "text": "read this", "url": link}, owner("console")) for link in links]
    commands += [({"platform": "bsky", "text": f"read this {link}"}, owner("console")) for link in links]
    answers = decide(redis_urls, tmp_path, commands)
    assert [a[:2] for a in answers] == [("pending_approval", "approval_required")] * 6, answers
    assert all("random" in message or "decodes" in message for _, _, message in answers), answers
    assert all("The link may hide a secret" in message for _, _, message in answers[:3])
    assert not (tmp_path / "outbox.jsonl").exists()


def test_a_link_the_owner_typed_is_published_and_the_same_link_from_autonomy_waits(redis_urls, admin, tmp_path):
    params = {"platform": "moltbook", "text": "the notes from today", "url": DOC}
    mine = owner("console", owner_words=[f"post the notes from today with {DOC}"])
    autonomy = Origin(AUTONOMY, "autonomy", platform="moltbook")
    answers = decide(redis_urls, tmp_path, [(params, mine), (params, autonomy)])
    assert answers[0][0] == "ok", answers
    assert answers[1][:2] == ("pending_approval", "approval_required")
    assert "The link may hide a secret" in answers[1][2] and "random" in answers[1][2]


def test_a_post_of_bits_in_a_title_waits(redis_urls, admin, tmp_path):
    bits = " ".join(f"{b:08b}" for b in base64.b64encode(b"a note"))
    params = {"platform": "reddit", "subreddit": "test", "title": bits, "text": "hello there"}
    answers = decide(redis_urls, tmp_path, [(params, owner("console"))])
    assert answers[0][:2] == ("pending_approval", "approval_required")
    assert "The title may hide a secret" in answers[0][2]


def test_a_post_carrying_a_message_in_invisible_characters_waits_for_the_owner(redis_urls, admin, tmp_path):
    """ASCII smuggling: the owner would read "Nice post!", the platform would get the PIN too."""
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "owner PIN 4821-7390")
    commands = [({"platform": "bsky", "text": "Nice post!" + hidden}, owner("console")),
                ({"platform": "reddit", "subreddit": "test", "title": "Hi\u200b\u200c\u200b", "text": "hello"},
                 owner("console"))]
    answers = decide(redis_urls, tmp_path, commands)
    assert [a[:2] for a in answers] == [("pending_approval", "approval_required")] * 2, answers
    assert all("invisible" in message for _, _, message in answers)
    assert not (tmp_path / "outbox.jsonl").exists()


def test_a_reply_or_quote_naming_a_random_looking_host_waits(redis_urls, admin, tmp_path):
    """Looking a post up tells the DNS server of its handle or host what the name holds: a key
    (folded to lower case, no longer decodable) in a handle leaves even if nothing is published."""
    raw = KEY.encode()
    label = base58(raw).lower()[:40]
    targets = [f"at://{label}.evil.example/app.bsky.feed.post/3kabc",
               f"https://bsky.app/profile/{label}.evil.example/post/3kabc"]
    commands = [({"platform": "bsky", "text": "nice", field: target}, owner("console"))
                for field in ("reply_to", "quote") for target in targets]
    commands.append(({"platform": "bsky", "text": "nice",
                      "reply_to": "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3kq2abcdxyz2k"},
                     owner("console")))
    answers = decide(redis_urls, tmp_path, commands)
    assert [a[:2] for a in answers[:-1]] == [("pending_approval", "approval_required")] * 4, answers
    assert all("random-looking" in a[2] for a in answers[:-1])
    assert answers[-1][0] == "ok", answers[-1]  # a DID is random by nature
