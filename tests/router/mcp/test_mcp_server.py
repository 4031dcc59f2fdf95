"""`python -m router.mcp` driven by the official SDK's client over stdio, against a real router
process, a real redis-server (the `mcp` ACL user) and the Mastodon fake."""

from __future__ import annotations

import asyncio
import json

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from agent.link.approval_desk import notice_text
from dashboard.approvals_view import pending_page
from protocol.approvals import decide
from protocol.hold_reasons import HoldReason, Sender, Why, sentence
from router.registry import discover_skills
from tests.router.router_helpers import RouterProcess, router_env, wait_until
from tests.support.fake_mastodon import FakeMastodon
from tests.support.mcp_client import McpSession, text_of

pytestmark = pytest.mark.slow
PLANTED = "masto-planted-Tok3n-9f8e7d6c5b"


@pytest.fixture
def mastodon():
    server = FakeMastodon(token=PLANTED).start()
    yield server
    server.stop()


@pytest.fixture
def stack(redis_urls, admin, mastodon, tmp_path):
    """Start a router (extra settings as keyword arguments) and an MCP session on it."""
    started: list = []

    def start(*args: str, command: tuple[str, ...] = ("-m", "router.mcp"), mcp_env: dict[str, str] | None = None,
              **router_settings: str) -> McpSession:
        # An MCP client's words may be anyone's: its public writes wait for the owner unless the
        # router is told otherwise; most tests here are about what comes after that.
        router_settings.setdefault("ROUTER_APPROVE_TAINTED_WRITES", "false")
        env = router_env(redis_urls.router_url, tmp_path / "router", MASTODON_INSTANCE=mastodon.url,
                         MASTODON_TOKEN=PLANTED, **router_settings)
        (tmp_path / "router").mkdir(exist_ok=True)
        router = RouterProcess(env, test_skills=False)
        started.append(router)

        def beating():
            assert router.process.poll() is None, router.log_path.read_text()
            return admin.exists(redis_urls.keys.router_heartbeat("r1"))

        wait_until(beating, "the router to start")
        env = {"REDIS_URL": redis_urls.mcp_url} if mcp_env is None else mcp_env
        session = McpSession(env, args, stderr_path=tmp_path / "mcp.stderr", command=command)
        started.append(session.__enter__())
        return session

    yield start
    for thing in reversed(started):
        if isinstance(thing, McpSession):
            thing.__exit__(None, None, None)
        else:
            thing.stop()


def everything(result: types.CallToolResult) -> str:
    return text_of(result) + json.dumps(result.structured_content) + json.dumps(result.meta or {})


def test_the_tool_list_is_the_registry(stack):
    skills = discover_skills()
    tools = {tool.name: tool for tool in stack().list_tools()}
    assert set(tools) == set(skills)
    for name, skill in skills.items():
        assert tools[name].description == skill.description and tools[name].input_schema == skill.schema
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is (not skill.side_effect)
    assert tools["DELETE_POST"].annotations.destructive_hint is True
    assert tools["CREATE_POST"].annotations.destructive_hint is False
    assert tools["CREATE_POST"].annotations.idempotent_hint is False
    assert tools["LIKE_POST"].annotations.idempotent_hint is True
    assert tools["GET_PROFILE"].annotations.open_world_hint is True and tools["PING"].annotations.open_world_hint is False


def test_read_only_offers_only_reading_tools_and_refuses_a_write(stack, mastodon):
    session = stack("--read-only")
    names = {tool.name for tool in session.list_tools()}
    assert names == {name for name, skill in discover_skills().items() if not skill.side_effect}
    with pytest.raises(MCPError, match="unknown tool 'CREATE_POST'"):
        session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "not from a read-only server"})
    assert mastodon.statuses == {}


def test_a_post_goes_out_once_and_the_result_is_marked_untrusted(stack, mastodon, tmp_path):
    session = stack()
    result = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "hello from an MCP client"})
    assert result.is_error is False, text_of(result)
    assert result.structured_content["status"] == "ok" and result.structured_content["untrusted"] is True
    assert result.meta == {"safeclaw/untrusted": True} and "UNTRUSTED_DATA" in text_of(result)
    assert [s["text"] for s in mastodon.statuses.values()] == ["hello from an MCP client"]
    audit = [json.loads(line) for line in (tmp_path / "router" / "audit" / "r1.jsonl").read_text().splitlines()]
    lines = [(a["action"], a["origin"]["via"], a["status"]) for a in audit if a.get("action")]
    assert ("CREATE_POST", "mcp", "ok") in lines and {line[:2] for line in lines} == {("CREATE_POST", "mcp")}


def test_a_retried_call_posts_exactly_once(stack, mastodon):
    session = stack()
    arguments = {"platform": "mastodon", "text": "said once, however often the client asks"}
    mastodon.fail_mode, mastodon.delay = "slow", 4.0
    with pytest.raises(MCPError, match="[Tt]imed out|timeout"):  # the client gives up; the post is under way
        session.run(session.session.call_tool("CREATE_POST", arguments, read_timeout_seconds=1.0))
    retry = session.call_tool("CREATE_POST", arguments)  # the client's retry: it waits for the first
    mastodon.fail_mode = None
    later = session.call_tool("CREATE_POST", arguments)  # and once more, after it finished
    assert len(mastodon.posts()) == 1, (text_of(retry), text_of(later)) and len(mastodon.statuses) == 1
    for result in (retry, later):
        assert result.is_error is False, text_of(result)
        assert result.structured_content["result"]["id"] in mastodon.statuses


def test_concurrent_identical_calls_post_once(stack, mastodon):
    session = stack()
    arguments = {"platform": "mastodon", "text": "two tabs, one click each"}

    async def both():
        return await asyncio.gather(*(session.session.call_tool("CREATE_POST", arguments) for _ in range(2)))

    results = session.run(both())
    assert len(mastodon.posts()) == 1
    assert any(r.is_error is False for r in results), [text_of(r) for r in results]


def test_a_held_post_waits_for_the_owners_approval(stack, mastodon, redis_urls):
    session = stack(ROUTER_REQUIRE_APPROVAL="mastodon:post")
    result = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "may I post this?"})
    answer = result.structured_content
    assert result.is_error is False and answer["status"] == "pending_approval", text_of(result)
    assert "error" not in answer  # held means waiting for the owner, not an error (docs/mcp.md)
    approval = answer["approval_id"]
    assert f"./safeclaw approve {approval}" in text_of(result) and "Do not call it again" in text_of(result)
    # SafeClaw's own words: said plainly, not fenced or marked as outside data
    assert "UNTRUSTED_DATA" not in text_of(result) and "untrusted" not in answer
    assert result.meta == {"safeclaw/untrusted": False}
    assert mastodon.statuses == {}
    control = redis_urls.server.admin_client()
    decide(control, redis_urls.keys, approval, "approve", "the owner")
    wait_until(lambda: len(mastodon.statuses) == 1, "the approved post")
    assert [s["text"] for s in mastodon.statuses.values()] == ["may I post this?"]


def test_by_default_an_mcp_clients_post_waits_for_the_owner_once_however_often_asked(stack, mastodon, redis_urls,
                                                                                    tmp_path):
    session = stack(ROUTER_APPROVE_TAINTED_WRITES="true")
    arguments = {"platform": "mastodon", "text": "words an MCP client chose"}
    first, again = (session.call_tool("CREATE_POST", arguments) for _ in range(2))
    assert first.structured_content["status"] == "pending_approval", text_of(first)
    assert "MCP client" in first.structured_content["reason"] and "error" not in first.structured_content
    assert f"Why it waits: {first.structured_content['reason']}" in text_of(first)
    assert again.structured_content["approval_id"] == first.structured_content["approval_id"]
    assert session.call_tool("GET_PROFILE", {"platform": "mastodon"}).is_error is False  # reads go on
    decide(redis_urls.server.admin_client(), redis_urls.keys, first.structured_content["approval_id"], "approve",
           "the owner")
    wait_until(lambda: len(mastodon.statuses) == 1, "the approved post")
    audit = [json.loads(line) for line in (tmp_path / "router" / "audit" / "r1.jsonl").read_text().splitlines()]
    origins = {json.dumps(a["origin"], sort_keys=True) for a in audit if a.get("action") == "CREATE_POST"}
    assert all('"via": "mcp"' in origin for origin in origins)
    assert len(mastodon.statuses) == 1


def test_every_screen_says_why_an_mcp_post_waits_in_the_same_sentence(stack, redis_urls, admin):
    """The MCP reply, the owner's notice (console, Telegram) and the dashboard's approval card show
    one sentence, and call the post the MCP client's, not the owner's."""
    session = stack(ROUTER_APPROVE_TAINTED_WRITES="true")
    held = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "words an MCP client chose"})
    said = sentence(HoldReason(Why.NOT_OWNER_WORDS, Sender.MCP, fields=("text",)))
    assert held.structured_content["reason"] == said
    assert f"Do not call it again. Why it waits: {said}" in text_of(held)
    [card] = pending_page(admin, redis_urls.keys)["approvals"]
    assert card["reason"] == said
    [notice] = [json.loads(raw) for raw in admin.lrange(redis_urls.keys.owner_notices, 0, -1)]
    shown = notice_text(notice)
    assert shown.startswith("Approval needed: a Mastodon post an MCP client asked for\n"), shown
    assert f"Why it waits: {said}" in shown and "your Mastodon post" not in shown


def test_the_kill_switch_denies(stack, mastodon, admin, redis_urls):
    session = stack()
    admin.set(redis_urls.keys.kill_switch, json.dumps({"on": True, "by": "dashboard"}))
    result = session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "stopped"})
    assert result.is_error is True and result.structured_content["error"] == "kill_switch"
    assert "kill switch" in text_of(result) and mastodon.statuses == {}
    assert session.call_tool("GET_PROFILE", {"platform": "mastodon"}).is_error is False  # reads go on


def test_a_planted_credential_never_appears_in_a_result_or_an_error(stack, mastodon, tmp_path):
    session = stack()
    mastodon.me = mastodon.account("safeclaw", f"agent {PLANTED}", f"<p>my token is {PLANTED}</p>")
    seen = [session.call_tool("GET_PROFILE", {"platform": "mastodon"})]
    seen.append(session.call_tool("CREATE_POST", {"platform": "mastodon", "text": f"the key: {PLANTED}"}))
    mastodon.fail_mode = "auth"  # its 401 body repeats the token it was sent
    seen.append(session.call_tool("GET_NOTIFICATIONS", {"platform": "mastodon"}))
    seen.append(session.call_tool("CREATE_POST", {"platform": "mastodon", "text": "a post the platform refuses"}))
    assert seen[0].is_error is False and "[REDACTED]" in everything(seen[0])
    assert seen[1].structured_content["error"] == "secret_in_text"
    assert all(PLANTED.encode() not in request.body for request in mastodon.posts())
    assert seen[2].is_error is True and seen[3].is_error is True
    for result in seen:
        assert PLANTED not in everything(result)
    assert PLANTED not in (tmp_path / "mcp.stderr").read_text()


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the client's own, on purpose
def test_a_malformed_call_gets_a_clear_error_and_the_server_keeps_serving(stack):
    session = stack()
    with pytest.raises(MCPError, match="unknown tool 'POST_EVERYWHERE'"):
        session.call_tool("POST_EVERYWHERE", {})
    wrong = session.call_tool("CREATE_POST", {"platform": "myspace", "text": 42})
    assert wrong.is_error is True and wrong.structured_content["error"] == "invalid_params"
    assert "invalid params for CREATE_POST" in text_of(wrong) and "input schema" in text_of(wrong)
    # SafeClaw's own check of the client's arguments: a plain tool error, not outside data
    assert "UNTRUSTED_DATA" not in text_of(wrong) and "came from outside" not in text_of(wrong)
    assert "untrusted" not in wrong.structured_content and wrong.meta == {"safeclaw/untrusted": False}
    # What the SDK's typed helper never sends: arguments that are not an object.
    params = types.CallToolRequestParams.model_construct(name="CREATE_POST", arguments=["not", "an", "object"])
    with pytest.raises(MCPError, match="Invalid request parameters"):
        session.run(session.session.send_request(types.CallToolRequest.model_construct(params=params),
                                                 types.CallToolResult))
    assert session.call_tool("PING", {}).is_error is False  # still serving


def test_safeclaw_mcp_reaches_the_running_stacks_router(stack, mastodon, redis_urls, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "mcp.env").write_text(f"REDIS_URL={redis_urls.mcp_url}\n")  # as ./safeclaw writes it
    session = stack(command=("scripts/run_stack.py", "mcp"), mcp_env={"SAFECLAW_RUN_DIR": str(run_dir)})
    result = session.call_tool("GET_PROFILE", {"platform": "mastodon"})
    assert result.is_error is False and "safeclaw" in json.dumps(result.structured_content["result"]), text_of(result)
