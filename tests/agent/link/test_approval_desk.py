"""Approvals from a chat: the agent delivers the router's notices and relays the owner's decision
with the router's one-time code; the model never sees the code, and a decision without it is
refused. Real redis-server, a real router (thread), the real router client, the real Telegram
client against the fake Bot API."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent.actions import local_actions
from agent.commands import CommandDispatcher
from agent.link.approval_desk import ApprovalDesk, notice_text
from agent.link.redis_pool import redis_client
from agent.link.router_client import RouterClient
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop
from tests.agent.channels.telegram_helpers import OWNER, STRANGER, make_channel, running, wait_for
from tests.router.router_helpers import WorkerThread, note_lines, settings_for, wait_until
from tests.support.fake_telegram import FakeTelegram


@pytest.fixture
def stack(redis_urls, tmp_path):
    settings = settings_for(
        redis_urls.router_url, tmp_path / "router", ROUTER_REQUIRE_APPROVAL="NOTE", ROUTER_CHAT_APPROVALS="true"
    )
    (tmp_path / "router").mkdir()
    conn = redis_client(redis_urls.agent_url)  # one pool for the client and the desk, as in the agent
    client = RouterClient(conn, redis_urls.keys, 10)
    with WorkerThread(settings):
        yield client, ApprovalDesk(conn, redis_urls.keys, client), tmp_path / "router"
    client.close()


def held(client, conversation=f"telegram:{OWNER}", origin=None):
    observation = client.call("NOTE", {"text": "a held note"}, conversation, origin=origin)
    assert observation["status"] == "pending_approval", observation
    return observation["approval_id"]


def test_owner_approves_with_a_slash_command_and_it_runs_once(stack, workspace):
    client, desk, data = stack
    approval_id = held(client)
    [notice] = wait_until(desk.take, "the request notice")
    assert notice.type == "approval_requested" and notice.conversation == f"telegram:{OWNER}"
    assert notice.data["owner_code"] not in notice_text(notice.data)  # the owner reads no code
    desk.delivered(notice)
    loop = AgentLoop(workspace, ScriptedLLM([]), local_actions(), client)
    commands = CommandDispatcher(loop, None, desk)
    assert approval_id in commands.handle("console", "/approvals")
    assert commands.handle("console", "/approve").startswith("Usage: /approve <id>")
    help_text = commands.handle("console", "/help")  # the router takes a chat's decision here
    assert "/approve <id>" in help_text and "/deny <id>" in help_text, help_text
    approved = commands.handle("console", f"/approve {approval_id}")
    assert approved == (
        "Done: your request to note is approved; the router runs it once, and you will be told how it went."
    )
    wait_until(lambda: note_lines(data), "the approved note")
    [settled] = wait_until(desk.take, "the outcome notice")
    assert settled.data["state"] == "approved"
    assert notice_text(settled.data).startswith("Approved: your request to note is out")
    assert "No approval" in commands.handle("console", "/approvals")
    assert "No approval" in commands.handle("console", f"/approve {approval_id}")
    assert len(note_lines(data)) == 1
    # Nothing of the code reached the workspace (prompts, history, artifact).
    code = notice.data["owner_code"]
    assert all(code not in p.read_text(errors="replace") for p in workspace.root.rglob("*") if p.is_file())


def test_a_decision_without_the_code_is_refused(stack):
    client, _desk, data = stack
    approval_id = held(client)
    for code in ("", "guessed-code", None):
        params = {
            "approval_id": approval_id,
            "decision": "approve",
            **({"code": code} if code is not None else {}),
        }
        answer = client.call("APPROVAL_DECISION", params, "console")
        assert answer["status"] == "denied"
    assert note_lines(data) == []


def test_deny_with_a_slash_command(stack, workspace):
    client, desk, data = stack
    approval_id = held(client)
    wait_until(desk.take, "the request notice")
    commands = CommandDispatcher(AgentLoop(workspace, ScriptedLLM([]), local_actions(), client), None, desk)
    assert commands.handle("console", f"/deny {approval_id}") == "Done: your request to note is denied; it will not run."
    [settled] = wait_until(desk.take, "the outcome notice")
    assert settled.data["state"] == "denied" and note_lines(data) == []


def test_a_notice_in_flight_is_delivered_after_a_restart(stack, redis_urls):
    client, desk, _data = stack
    held(client)
    taken = wait_until(desk.take, "the request notice")
    again = ApprovalDesk(redis_client(redis_urls.agent_url), redis_urls.keys, client)  # a new agent process
    assert [n.raw for n in again.in_flight()] == [n.raw for n in taken]
    again.delivered(taken[0])
    assert again.in_flight() == []


@pytest.mark.slow
def test_telegram_buttons_in_the_owners_private_chat_only(stack, tmp_path):
    client, desk, data = stack

    class Service:
        pass

    service = Service()
    service.desk = desk
    with FakeTelegram() as fake:
        channel = make_channel(fake, tmp_path, service=service)
        approval_id = held(client)
        [notice] = wait_until(desk.take, "the request notice")

        async def scenario():
            async with running(channel, fake):
                await channel.send_notice(f"telegram:{OWNER}", notice.data, notice_text(notice.data))
                fake.push_callback(STRANGER, STRANGER, f"approval:approve:{approval_id}")
                fake.push_callback(OWNER, -500, f"approval:approve:{approval_id}", chat_type="group")
                await wait_for(fake, lambda: fake.sent_texts(STRANGER))  # refused, and nothing ran
                assert note_lines(data) == [] and fake.calls_of("answerCallbackQuery") == []
                fake.push_callback(OWNER, OWNER, f"approval:approve:{approval_id}")
                await wait_for(fake, lambda: note_lines(data))
                fake.push_callback(OWNER, OWNER, f"approval:approve:{approval_id}")  # pressed twice
                await wait_for(fake, lambda: len(fake.calls_of("answerCallbackQuery")) >= 2)

        asyncio.run(scenario())
        [request] = [m for m in fake.sent_messages(OWNER) if m.get("reply_markup")]
        buttons = request["reply_markup"]["inline_keyboard"][0]
        assert [b["text"] for b in buttons] == ["Approve", "Deny"]
        assert buttons[0]["callback_data"] == f"approval:approve:{approval_id}"
        assert notice.data["owner_code"] not in json.dumps(fake.sent_messages())
        answers = [c.params.get("text", "") for c in fake.calls_of("answerCallbackQuery")]
        assert answers[-1].startswith("No approval") or "refused" in answers[-1]
    assert len(note_lines(data)) == 1


def test_a_platforms_circuit_notice_reaches_the_owner_readably(redis_urls):
    """The router's circuit breaker (router.bounds) pushes on the same notices list; the desk
    takes it as the agent's Redis user and the owner reads the router's one line."""
    from router.bounds.circuit import CircuitBreaker
    from router.bounds.settings import BoundsSettings
    from tests.router.bounds.bounds_helpers import FakeEffect, router_conn

    breaker = CircuitBreaker(BoundsSettings(circuit_failures=1), f"{redis_urls.keys.router_prefix}circuit:",
                             redis_urls.keys.owner_notices)
    with router_conn(redis_urls.router_url) as conn:
        breaker.record(conn, FakeEffect("moltbook", "post", "x"), "unknown", "request_failed", 1000.0, "autonomy")
    desk = ApprovalDesk(redis_client(redis_urls.agent_url), redis_urls.keys, None)
    [notice] = wait_until(desk.take, "the circuit notice")
    assert (notice.type, notice.conversation) == ("circuit_open", "autonomy")
    text = notice_text(notice.data)
    assert text.startswith("Circuit breaker: moltbook: 1 failed writes in a row") and "None" not in text
    desk.delivered(notice)
    assert desk.in_flight() == []


def test_with_chat_approvals_off_no_code_reaches_the_agent_and_the_owner_is_sent_elsewhere(
    redis_urls, tmp_path, workspace
):
    # Whoever holds the agent's Redis login can read what the agent relays; with
    # ROUTER_CHAT_APPROVALS=false there is no code to read and a relayed decision is refused.
    (tmp_path / "router").mkdir()
    settings = settings_for(
        redis_urls.router_url, tmp_path / "router", ROUTER_REQUIRE_APPROVAL="NOTE", ROUTER_CHAT_APPROVALS="false"
    )
    conn = redis_client(redis_urls.agent_url)
    client = RouterClient(conn, redis_urls.keys, 10)
    with WorkerThread(settings):
        desk = ApprovalDesk(conn, redis_urls.keys, client)
        approval_id = held(client)
        [notice] = wait_until(desk.take, "the request notice")
        assert not notice.data.get("owner_code")
        assert f"./safeclaw approve {approval_id}" in notice_text(notice.data)
        loop = AgentLoop(workspace, ScriptedLLM([]), local_actions(), client)
        commands = CommandDispatcher(loop, None, desk)
        listed = commands.handle("console", "/approvals")
        assert approval_id in listed and "./safeclaw approve <id>" in listed, listed
        assert "dashboard" in commands.handle("console", f"/approve {approval_id}")
        help_text = commands.handle("console", "/help")  # not offered where it cannot work
        assert "/approve" not in help_text and "/deny" not in help_text, help_text
        assert "./safeclaw approve <id>" in help_text and "/approvals" in help_text, help_text
        forged = {"approval_id": approval_id, "decision": "approve", "code": "anything"}
        refused = client.call("APPROVAL_DECISION", forged, "console")
        assert refused["status"] == "denied" and "ROUTER_CHAT_APPROVALS" in refused["message"]
    client.close()
    assert note_lines(tmp_path / "router") == []


def test_approvals_in_the_console_agree_with_the_routers_list_at_once(stack, workspace, redis_urls):
    """Issue 21, item 8: right after a post was held, /approvals said "No approval is waiting for
    you." while `./safeclaw approvals` listed it (the console knew only what notices had brought)."""
    from protocol import approvals
    from scripts.control_cli import list_approvals

    client, desk, _ = stack
    client.on_held = desk.note_held
    loop = AgentLoop(workspace, ScriptedLLM([]), local_actions(), client)
    commands = CommandDispatcher(loop, None, desk)
    approval_id = held(client, "console")  # no notice taken yet: the desk knows from the reply
    listed = commands.handle("console", "/approvals")
    assert listed.startswith(f"{approval_id}: your request to note: a held note"), listed
    control = redis_urls.admin_client()
    try:
        assert [view["id"] for view in approvals.pending(control, redis_urls.keys)] == [approval_id]
        assert approval_id in "\n".join(list_approvals(control, redis_urls.keys))
        # Decided elsewhere (the dashboard, the command line): the console says so at once too.
        approvals.decide(control, redis_urls.keys, approval_id, "deny", "owner (test)")
        wait_until(lambda: not approvals.pending(control, redis_urls.keys), "the router settles it")
    finally:
        control.close()
    assert commands.handle("console", "/approvals") == "No approval is waiting for you."


def test_approvals_in_the_console_show_every_field_why_and_what_was_read(stack, workspace):
    from protocol.origin import OWNER, Origin

    client, desk, _data = stack
    held(client, "console", Origin(OWNER, "console", taint=("_BROWSER_VISION https://page.example",)))
    [notice] = wait_until(desk.take, "the request notice")
    desk.delivered(notice)
    loop = AgentLoop(workspace, ScriptedLLM([]), local_actions(), client)
    shown = CommandDispatcher(loop, None, desk).handle("console", "/approvals")
    assert "text: a held note" in shown
    assert "Why it waits: You asked for every command of this kind to wait for your approval." in shown
    assert "The turn had read: _BROWSER_VISION https://page.example" in shown
