"""A platform that echoes the router's key in a spelling no table listed (base58, base36, bits,
uuencode, Braille, Morse, a Caesar shift, look-alike alphabets) inside a successful answer: the
reply the agent gets from a real router holds none of it."""

import json

import pytest

from tests.protocol.test_unlisted_spellings import numbers_and_symbols, rearranged, spelt_out, substitutions
from tests.router.router_helpers import moltbook_router, push, reply_of
from tests.support.fake_moltbook import FakeMoltbook

KEY = "moltbook_sk_" + "Echo7fKq9Zx2Lw4Tb"
SPELLINGS = {**numbers_and_symbols(KEY), **substitutions(KEY), **spelt_out(KEY), **rearranged(KEY)}


@pytest.fixture(scope="module")
def fake():
    server = FakeMoltbook(api_key=KEY).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def router(redis_server, fake, tmp_path_factory):
    with moltbook_router(redis_server, tmp_path_factory.mktemp("echo"), KEY, fake) as admin:
        yield admin


@pytest.mark.parametrize("form", sorted(SPELLINGS))
def test_the_key_echoed_in_an_unlisted_spelling_never_reaches_the_agent(router, redis_server, fake, form):
    shown = SPELLINGS[form]
    fake.description = f"my key is {shown} ok"
    keys = redis_server.keys
    reply = reply_of(router, keys, push(router, keys, "GET_PROFILE", {"platform": "moltbook"}))
    text = json.dumps(reply, ensure_ascii=False)
    assert reply["status"] == "ok" and "[REDACTED]" in text, text
    assert shown not in text and json.dumps(shown)[1:-1] not in text
