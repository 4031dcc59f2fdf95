"""One account on each platform's fake, for router tests that run the same write everywhere: its
credentials and settings, a post of its own, someone else's post, and what the fake saw."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.support.fake_bsky import FakeBluesky
from tests.support.fake_mastodon import FakeMastodon
from tests.support.fake_moltbook import FakeMoltbook
from tests.support.fake_reddit import FakeReddit
from tests.support.fake_x import ME_ID, FakeX
from tests.support.recording_server import Recorded, RecordingServer

# Requests that only log in, on any fake: they change nothing anyone sees.
LOGINS = frozenset({"/xrpc/com.atproto.server.createSession", "/xrpc/com.atproto.server.refreshSession",
                    "/api/v1/access_token"})


@dataclass
class Account:
    platform: str
    fake: RecordingServer
    credentials: dict[str, str]
    env: dict[str, str]
    own: str  # a post of the account's own
    other: str  # a post by someone else
    exists: Callable[[str], bool]  # whether the fake still has this post

    def writes(self) -> list[Recorded]:
        """Every request the fake got that may have changed something (not a read, not a login)."""
        return [r for r in self.fake.requests if r.method != "GET" and r.path not in LOGINS]


def bsky() -> Account:
    fake = FakeBluesky(password="bsky-" + "last-moment-1").start()
    other = fake.add_post(fake.add_account("someone.test"), "their post")
    own = fake.add_post(fake.did, "my post")
    return Account("bsky", fake, {"BSKY_HANDLE": fake.handle, "BSKY_PASSWORD": fake.password},
                   {"BSKY_SERVICE": fake.url, "BSKY_APPVIEW": fake.url}, own, other,
                   lambda uri: uri in fake.records)


def mastodon() -> Account:
    fake = FakeMastodon(token="mastodon-" + "last-moment-2").start()
    own = fake.add_status("my post")["id"]
    other = fake.add_status("their post", author=fake.account("someone"))["id"]
    return Account("mastodon", fake, {"MASTODON_TOKEN": fake.token, "MASTODON_INSTANCE": fake.url}, {},
                   own, other, lambda ident: ident in fake.statuses)


def reddit() -> Account:
    fake = FakeReddit(password="reddit-" + "last-moment-3").start()
    credentials = {"REDDIT_CLIENT_ID": fake.client_id, "REDDIT_SECRET": fake.secret,
                   "REDDIT_USERNAME": fake.username, "REDDIT_PASSWORD": fake.password}
    own = fake.add_submission(author=fake.username).fullname
    other = fake.add_submission(author="someone").fullname
    return Account("reddit", fake, credentials, {"REDDIT_URL": fake.url, "REDDIT_OAUTH_URL": fake.url},
                   own, other, lambda fullname: fullname in fake.things)


def x() -> Account:
    credentials = {"X_API_KEY": "ck-last-1", "X_API_SECRET": "cs-last-2",
                   "X_ACCESS_TOKEN": f"{ME_ID}-at-last-3", "X_ACCESS_SECRET": "as-last-4"}
    fake = FakeX(**{k.lower().removeprefix("x_"): v for k, v in credentials.items()}).start()
    own = fake.add_tweet("my post")["id"]
    other = fake.add_tweet("their post", author_id="2001")["id"]
    return Account("x", fake, credentials, {"X_API_BASE": fake.url}, own, other,
                   lambda ident: ident in fake.tweets)


def moltbook() -> Account:
    fake = FakeMoltbook(api_key="moltbook_sk_" + "lastMoment4567").start()
    own = fake.add_post("my title", "my post", author=fake.agent).id
    other = fake.add_post("their title", "their post", author="someone").id
    return Account("moltbook", fake, {"MOLTBOOK_API_KEY": fake.api_key}, {"MOLTBOOK_API_BASE": fake.base},
                   own, other, lambda ident: ident in fake.posts)


ACCOUNTS: dict[str, Callable[[], Account]] = {
    "bsky": bsky, "mastodon": mastodon, "reddit": reddit, "x": x, "moltbook": moltbook,
}
