"""Reading slash commands: the actions they build and the usage errors they give."""

import pytest

from agent.actions import local_actions
from agent.commands.parse import CommandBuilders, CommandUsageError, platform_of_post, split_command
from agent.link.router_client import NoRouter
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop


@pytest.fixture
def build(workspace):
    loop = AgentLoop(workspace, ScriptedLLM([]), local_actions(), NoRouter())
    return CommandBuilders(loop.action_schemas())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/post bsky hi", ("post", "bsky hi")),
        ("  /POST   bsky   hi  ", ("post", "bsky   hi")),
        ("/help", ("help", "")),
        ("/post@SafeClawBot bsky hi", ("post", "bsky hi")),
        ("/remember\ncat = Miso", ("remember", "cat = Miso")),
    ],
)
def test_a_command_is_split_into_name_and_arguments(text, expected):
    assert split_command(text) == expected


@pytest.mark.parametrize("text", ["hello /post bsky hi", "/etc/hosts is a file", "/ post", "", "//post x"])
def test_text_that_is_not_a_command_goes_to_the_model(text):
    assert split_command(text) is None


@pytest.mark.parametrize(
    ("ref", "platform"),
    [
        ("https://bsky.app/profile/alice.test/post/3k2", "bsky"),
        ("at://did:plc:abc/app.bsky.feed.post/3k2", "bsky"),
        ("https://x.com/alice/status/123", "x"),
        ("https://twitter.com/alice/status/123", "x"),
        ("https://www.reddit.com/r/python/comments/abc/title/", "reddit"),
        ("https://www.moltbook.com/post/42", "moltbook"),
        ("https://mastodon.social/@alice/1099", "mastodon"),
        ("https://example.com/some/page", None),
        ("12345", None),
        ("javascript:alert(1)", None),
    ],
)
def test_the_platform_is_told_from_the_post_address(ref, platform):
    assert platform_of_post(ref) == platform


def test_post_builds_the_same_create_post_the_model_would(build):
    [action] = build.post("bluesky Hello   world, it's me")
    assert (action.name, action.params) == (
        "CREATE_POST",
        {"platform": "bsky", "text": "Hello   world, it's me"},
    )


def test_reply_like_delete_take_the_platform_from_the_url_or_the_first_word(build):
    url = "https://bsky.app/profile/alice.test/post/3k2"
    [reply] = build.reply(f"{url} thanks a lot")
    assert reply.params == {"platform": "bsky", "text": "thanks a lot", "reply_to": url}
    [like] = build.like("mastodon https://social.example/users/alice/statuses/9")
    assert (like.name, like.params["platform"]) == ("LIKE_POST", "mastodon")
    [delete] = build.delete("x 1790000000000")
    assert delete.params == {"platform": "x", "post_id": "1790000000000"}


def test_remember_forget_browse_notifications(build):
    [write] = build.remember("favourite colour =  green ")
    assert write.params == {"new_memory": {"favourite colour": "green"}}
    [forget] = build.forget("favourite colour")
    assert (forget.name, forget.params) == ("_MEMORY_FORGET", {"keys": ["favourite colour"]})
    [browse] = build.browse("https://example.com/page")
    assert (browse.name, browse.params) == ("_BROWSER_VISION", {"url": "https://example.com/page"})
    [notes] = build.notifications("Twitter")
    assert (notes.name, notes.params) == ("GET_NOTIFICATIONS", {"platform": "x"})


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        ("post", "", r"Usage: /post <platform> <text> \(platforms: bsky, mastodon"),
        ("post", "bsky", r"Usage: /post <platform> <text>"),
        ("post", "myspace hello", r"'myspace' is not a platform I know.*Usage: /post"),
        ("post", "bsky " + "x" * 10001, r"That does not fit CREATE_POST: .*text.*Usage: /post"),
        ("reply", "", r"Usage: /reply \[platform\] <post URL> <text>"),
        ("reply", "https://bsky.app/profile/a/post/1", r"the text of the reply is missing"),
        (
            "reply",
            "https://example.com/p hello",
            r"cannot tell the platform from 'https://example.com/p'.*/reply mastodon",
        ),
        ("like", "bsky", r"the post's URL or id is missing"),
        (
            "like",
            "https://bsky.app/profile/a/post/1 https://bsky.app/profile/a/post/2",
            r"only one post at a time",
        ),
        ("delete", "", r"Usage: /delete \[platform\] <post URL>"),
        ("notifications", "", r"Usage: /notifications <platform>"),
        ("notifications", "bsky x", r"Usage: /notifications <platform>"),
        ("remember", "cat is Miso", r"Usage: /remember <key> = <value>"),
        ("remember", " = Miso", r"Usage: /remember <key> = <value>"),
        ("remember", "cat =", r"Usage: /remember <key> = <value>"),
        ("forget", "  ", r"Usage: /forget <key>"),
        ("browse", "not an address", r"Usage: /browse <url> \(one web address, such as example.com"),
        ("browse", "localhost", r"Usage: /browse <url>"),
        ("browse", "file:///etc/passwd", r"Usage: /browse <url>"),
        ("browse", "javascript:alert(1)", r"Usage: /browse <url>"),
        ("search", "", r"Usage: /search <words>, e.g. /search spring"),
        ("search", '""', r"Usage: /search <words>"),
        ("search", "mastodon cats", r"Only public Bluesky posts can be searched"),
    ],
)
def test_a_bad_command_says_what_was_expected(build, command, args, expected):
    with pytest.raises(CommandUsageError, match=expected):
        getattr(build, command)(args)


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("example.com", "https://example.com"),
        ("news.example.org/page?id=3", "https://news.example.org/page?id=3"),
        ("http://example.com", "http://example.com"),
        ("example.com:8080/x", "https://example.com:8080/x"),
    ],
)
def test_browse_takes_an_address_typed_without_its_scheme(build, typed, url):
    """The newcomer's walk of issue 31: `/browse example.com` answered with a usage error."""
    [browse] = build.browse(typed)
    assert browse.params == {"url": url}


@pytest.mark.parametrize(
    ("typed", "query"),
    [
        ("spring flowers", "spring flowers"),
        ("bluesky spring flowers", "spring flowers"),
        ("bsky cats", "cats"),
        ('"red fox"', "red fox"),
        ("x files", "x files"),  # "x" is a word of the query here, not the platform: only Bluesky is searched
        ("bluesky", "bluesky"),
    ],
)
def test_search_looks_for_the_words_on_bluesky(build, typed, query):
    [search] = build.search(typed)
    assert (search.name, search.params) == ("SEARCH_POSTS", {"platform": "bsky", "query": query})


def test_an_action_missing_from_the_catalogue_is_not_available(workspace):
    build = CommandBuilders({})
    with pytest.raises(CommandUsageError, match="unknown action 'CREATE_POST'"):
        build.post("bsky hi")


@pytest.mark.parametrize(
    ("typed", "text"),
    [
        ('"Testing"', "Testing"),
        ("'Testing'", "Testing"),
        ("“Testing, one two”", "Testing, one two"),
        ("‘Testing’", "Testing"),
        ("«Testing»", "Testing"),
        ('"Testing" she said', '"Testing" she said'),  # not one pair around the whole text: kept
        ('"Testing', '"Testing'),
        ('"one" and "two"', '"one" and "two"'),  # two quoted parts, not one around it all
        ("it's me", "it's me"),
    ],
)
def test_post_and_reply_drop_one_pair_of_quotes_around_the_whole_text(build, typed, text):
    """Issue 31, item 6: `/post bsky "Testing"` posted the quote marks."""
    [post] = build.post(f"bsky {typed}")
    assert post.params["text"] == text
    [reply] = build.reply(f"https://bsky.app/profile/alice.test/post/3k2 {typed}")
    assert reply.params["text"] == text
