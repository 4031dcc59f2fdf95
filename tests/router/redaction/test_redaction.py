"""The redactor: every form of a loaded secret and common token shapes become [REDACTED]."""

import base64
import io
import logging
from urllib.parse import quote

from router.config.credentials import load_credentials, platforms_with_credentials, secret_values
from router.redaction import REDACTED, RedactingFilter, Redactor

SECRET = "planted-secret-Zq9/+x&y=1"


def test_every_form_of_a_secret_is_redacted():
    redactor = Redactor([SECRET])
    forms = [SECRET, quote(SECRET, safe=""), base64.b64encode(SECRET.encode()).decode(),
             base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("=")]
    for form in forms:
        out = redactor.text(f"before {form} after")
        assert form not in out and out == f"before {REDACTED} after"


def test_token_shapes_are_redacted_without_being_loaded():
    redactor = Redactor()
    samples = [
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "Authorization: Bearer abcdefghijklmnop.qrstu",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "xoxb-" + "1234567890-abcdefghij",  # fake token shapes, split so scanners skip them
        "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    ]
    for sample in samples:
        assert REDACTED in redactor.text(f"x {sample} y"), sample


def test_nested_values_and_keys_are_redacted_and_plain_text_kept():
    redactor = Redactor([SECRET])
    value = {"ok": "fine", "list": [SECRET, {"k": f"a{SECRET}b"}], SECRET: 1, "n": 3}
    expected = {"ok": "fine", "list": [REDACTED, {"k": f"a{REDACTED}b"}], REDACTED: 1, "n": 3}
    assert redactor.value(value) == expected


def test_too_short_secrets_are_reported_not_used():
    redactor = Redactor(["abc"])
    assert redactor.too_short == ["abc"] and redactor.text("abc") == "abc"


def test_log_filter_redacts_message_args_and_traceback():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(Redactor([SECRET])))
    logger = logging.getLogger("test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("login with %s failed", SECRET)
        try:
            raise ValueError(f"server said: bad password {SECRET}")
        except ValueError:
            logger.exception("boom")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert SECRET not in text and text.count(REDACTED) == 2 and "ValueError" in text


def test_credentials_loaded_and_platforms_complete():
    env = {"BSKY_HANDLE": "me.bsky.social", "BSKY_PASSWORD": "app-pass-1234", "REDDIT_SECRET": "s3cr3t-x",
           "MASTODON_TOKEN": "", "OPENAI_API_KEY": "sk-notreal-123456", "PATH": "/bin"}
    credentials = load_credentials(env)
    assert credentials == {"BSKY_HANDLE": "me.bsky.social", "BSKY_PASSWORD": "app-pass-1234",
                           "REDDIT_SECRET": "s3cr3t-x"}
    assert platforms_with_credentials(credentials) == ["bsky"]
    assert secret_values(env, credentials) == ["app-pass-1234", "s3cr3t-x", "sk-notreal-123456"]



def test_a_token_that_begins_with_a_platforms_name_leaves_names_and_fields_alone():
    redactor = Redactor(["mastodon-" + "token-3"])
    reply = {"platform": "mastodon", "error": "auth_failed", "mastodon": "token",
             "message": "mastodon rejected the credentials (401); check MASTODON_TOKEN in router/.env"}
    assert redactor.value(reply) == reply
    assert redactor.text("a mastodon-" + "token-3 here") == f"a {REDACTED} here"
