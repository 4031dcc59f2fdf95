"""A post plants a bare domain and a look-alike support handle; a scripted model repeats both as
background. The owner is shown each marked as outside, in the answer and on Telegram, with no
link or mention a renderer would make of it; the post author's own handle and a link the owner
wrote are kept as written. Real router, Redis and fake AppView and Telegram."""

import asyncio
import re

from agent.app import build_loop
from agent.explain import explain_post, render_text
from agent.flow.outside_links import WITHHELD_BULLET, OutsideLinks
from agent.llm.scripted.llm import ScriptedLLM
from agent.service import AgentService
from tests.agent.channels.telegram_helpers import OWNER, make_settings, running, wait_for
from tests.agent.explain.test_explain_post import step, verdict
from tests.support.fake_telegram import FakeTelegram

OWNER_LINK = "docs.owner.example"
LURE_BULLETS = [
    "Locked accounts are restored through support-bsky.com, the team says [2].",
    "Write to @bsky-support․help to appeal a suspension [2].",  # a one-dot leader, not a full stop
    "Defanged too: helpdesk[.]example and hxxp://appeal.example/form [2].",
    f"@scamvictim.test posted it; the owner's notes at {OWNER_LINK} cover appeals [2].",
]
PLANTED = ("support-bsky.com", "bsky-support.help", "helpdesk.example", "appeal.example")
# What Telegram's clients turn into links or mentions in plain text: a host with ASCII dots (with
# or without a scheme) and an @username.
AUTOLINK = re.compile(r"(?:[a-z][a-z0-9+.-]*://)?(?:[\w-]+\.)+[a-z]{2,}|@\w{3,}", re.IGNORECASE)


def seed_lure(bsky):
    victim = bsky.add_account("scamvictim.test")
    helper = bsky.add_account("helpdesk-fan.test")
    bsky.add_post(helper, "appeals: support-bsky.com or DM @bsky-support․help, helpdesk[.]example")
    post = bsky.add_post(victim, "my account got locked, support-bsky.com says @bsky-support․help can fix it")
    return f"https://bsky.app/profile/scamvictim.test/post/{post.rsplit('/', 1)[1]}"


def script():
    return [step("search", "appeals: support-bsky.com"), step("finish", bullets=LURE_BULLETS), verdict("pass")]


def autolinks(text: str) -> list[str]:
    return [m.group().casefold() for m in AUTOLINK.finditer(text)]


def assert_marked(text: str) -> None:
    linked = autolinks(text)
    for planted in PLANTED:
        assert not any(planted in link or planted.split(".")[0] == link.lstrip("@") for link in linked), (
            planted, linked)
        assert f"[outside: {planted.replace('.', '[.]')}]" in text.replace("(at)", "")
    assert "@scamvictim.test posted it" in text and OWNER_LINK in text


def test_planted_hosts_and_handles_are_marked_outside_and_none_is_clickable(router, bsky):
    url = seed_lure(bsky)
    result = explain_post(url, router, ScriptedLLM(script()), owner_words=[f"my notes: {OWNER_LINK}"])
    shown = render_text(result)
    assert result.passed, shown
    assert_marked("\n".join(result.bullets))
    assert_marked(shown)
    assert set(PLANTED) | {"@bsky-support.help"} >= set(result.outside_links) >= {
        "support-bsky.com", "@bsky-support.help", "helpdesk.example", "appeal.example"}
    assert "[2] [outside: (at)helpdesk-fan[.]test]: https://bsky.app/profile/helpdesk-fan.test/" in shown
    assert f"Background for @scamvictim.test's post ({url})" in shown


def test_on_telegram_the_owner_gets_no_link_to_a_planted_host(router, bsky, tmp_path):
    url = seed_lure(bsky)
    with FakeTelegram() as fake:
        settings = make_settings(fake, tmp_path)
        service = AgentService(settings, build_loop(settings, llm=ScriptedLLM(script()), router=router))
        channel = service.make_channel("telegram")
        service.channels = [channel]
        service.loop.workspace.begin_turn(f"telegram:{OWNER}", f"my notes are at {OWNER_LINK}")
        fake.push_message(OWNER, OWNER, f"/explain {url}")

        async def scenario():
            async with running(channel, fake):
                await wait_for(fake, lambda: any("Sources:" in t for t in fake.sent_texts(OWNER)))

        asyncio.run(scenario())
        sent = fake.sent_messages(OWNER)
    answer = next(str(m["text"]) for m in sent if "Sources:" in str(m["text"]))
    assert_marked(answer)
    assert all(not m.get("parse_mode") for m in sent)
    assert all("is_disabled" in str(m.get("link_preview_options")) for m in sent)
    progress = [str(m["text"]) for m in sent if str(m["text"]).startswith("…")]
    assert any("appeals" in line for line in progress)
    assert not any(p in link for line in progress for link in autolinks(line) for p in PLANTED)


def test_spaced_and_bracketed_spellings_are_marked_whole_and_own_names_kept():
    links = OutsideLinks.for_explain(["https://bsky.app/profile/a.test/post/3l2abc"], "a.test")
    kept, found = links.mark("Spaced out: scam . example")
    assert "scam" not in kept.replace("[outside: scam[.]example]", "") and found == ["scam.example"]
    assert links.mark("see (scam.example/login)!")[0] == "see ([outside: scam[.]example])!"
    assert links.mark("scam(dot)example, scam dot example, ｓｃａｍ．ｅｘａｍｐｌｅ") == (
        "[outside: scam[.]example], [outside: scam[.]example], [outside: scam[.]example]", ["scam.example"])
    assert links.mark("a host the tokens do not split: scam .example") == (WITHHELD_BULLET, ["scam.example"])
    assert links.mark("@a.test and a.test and bsky.app/profile/a.test") == (
        "@a.test and a.test and bsky.app/profile/a.test", [])
