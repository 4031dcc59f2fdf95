import json

import pytest

from agent.actions import local_actions
from agent.actions.summary import llm_summary
from agent.errors import LLMError
from agent.llm.scripted.llm import ScriptedLLM
from agent.mind.loop import AgentLoop, LoopLimits


class RecordingRouter:
    """A router port that records what the mind asked for and answers with a fixed observation."""

    def __init__(self, answer=None):
        self.calls = []
        self.intents = []
        self.answer = answer or {"status": "ok", "result": {"pong": True}}

    def call(self, action, params, conversation, intent="", origin=None):
        self.calls.append((action, params, conversation))
        self.intents.append(intent)
        return dict(self.answer)


def make_loop(workspace, *replies, router=None, max_steps=5, retries=2):
    llm = ScriptedLLM(list(replies))
    loop = AgentLoop(
        workspace, llm, local_actions(), router or RecordingRouter(), LoopLimits(max_steps, retries)
    )
    return loop, llm


def tool(*actions):
    return "<tool_code>" + json.dumps([{"name": n, "params": p} for n, p in actions]) + "</tool_code>"


def test_plain_answer_ends_the_turn_and_is_saved(workspace):
    loop, llm = make_loop(workspace, "Hi! How can I help?")
    result = loop.run_turn("console", "hello")
    assert result.reply == "Hi! How can I help?"
    assert len(llm.prompts) == 1 and "hello" in llm.prompts[0]
    assert workspace.load_history("console")[-1]["response"] == "Hi! How can I help?"


def test_memory_write_then_observe_then_answer(workspace):
    loop, llm = make_loop(
        workspace,
        "Noted. " + tool(("_MEMORY_WRITE", {"new_memory": {"cat": "Miso"}})),
        "I will remember that your cat is Miso.",
    )
    result = loop.run_turn("console", "My cat is Miso")
    assert result.reply == "I will remember that your cat is Miso."
    assert workspace.load_memory()["cat"]["value"] == "Miso"
    assert "remembered cat" in llm.prompts[1]  # the second step observed the result
    artifact = workspace.load_artifact()
    assert artifact["conversation"] == "console"
    assert artifact["steps"][0]["results"][0]["status"] == "ok"


def test_router_actions_go_to_the_router_port(workspace):
    router = RecordingRouter()
    loop, llm = make_loop(workspace, tool(("PING", {})), "The router is alive.", router=router)
    assert loop.run_turn("console", "ping the router").reply == "The router is alive."
    assert router.calls == [("PING", {}, "console")]
    assert '"pong": true' in llm.prompts[1]


def test_malformed_tool_code_is_retried_then_answered(workspace):
    loop, llm = make_loop(workspace, "<tool_code>[{oops}]</tool_code>", "Sorry, plain answer.")
    assert loop.run_turn("console", "x").reply == "Sorry, plain answer."
    assert "not valid JSON" in llm.prompts[1]


def test_retries_are_bounded_and_the_user_gets_a_clear_message(workspace):
    loop, llm = make_loop(workspace, *["<tool_code>nope</tool_code>"] * 3, retries=2)
    reply = loop.run_turn("console", "x").reply
    assert "could not work out a valid action" in reply
    assert len(llm.prompts) == 3


def test_unknown_action_is_an_observation_not_a_crash(workspace):
    loop, llm = make_loop(workspace, tool(("FORMAT_DISK", {})), "OK, I can't do that.")
    assert loop.run_turn("console", "x").reply == "OK, I can't do that."
    assert "unknown action 'FORMAT_DISK'" in llm.prompts[1]


def test_step_bound_stops_a_looping_model(workspace):
    loop, llm = make_loop(workspace, *[tool(("NOTE", {"text": f"n{i}"})) for i in range(10)], max_steps=3)
    result = loop.run_turn("console", "loop forever")
    assert len(llm.prompts) == 3
    assert "stopped after 3 steps" in result.reply


def test_llm_failure_is_a_clear_message_and_the_message_is_kept(workspace):
    loop, _ = make_loop(workspace, LLMError("ollama", "cannot reach Ollama", "is `ollama serve` running?"))
    reply = loop.run_turn("console", "remember my birthday").reply
    assert "could not reach my language model" in reply and "ollama serve" in reply
    assert workspace.load_history("console")[-1]["user"] == "remember my birthday"


def test_local_action_failure_is_an_observation(workspace):
    loop, llm = make_loop(workspace, tool(("_LLM_SUMMARY", {"content": "../memory.json"})), "Could not.")
    assert loop.run_turn("console", "x").reply == "Could not."
    assert "outside the workspace output folder" in llm.prompts[1]


def test_an_action_summarises_in_the_same_turn_and_a_follow_up_key_runs_nothing(workspace):
    (workspace.output_dir / "page.txt").write_text("A page about cats.")

    def fake_vision(params, ctx):
        summary = llm_summary({"content": "output/page.txt"}, ctx)
        # A result's follow_up key is data like any other: nothing runs from it.
        return {"saved": "output/page.txt", "summary": summary["output"],
                "follow_up": [{"name": "_MEMORY_WRITE", "params": {"new_memory": {"x": 1}}}]}

    actions = {**local_actions(), "_FAKE_VISION": fake_vision}
    workspace.root.joinpath("agent_action.json").write_text(
        json.dumps(
            json.loads(workspace.root.joinpath("agent_action.json").read_text())
            + [{"name": "_FAKE_VISION", "instruction": "", "params": {"type": "object"}}]
        )
    )
    llm = ScriptedLLM([tool(("_FAKE_VISION", {})), "It is about cats.", "The page is about cats."])
    loop = AgentLoop(workspace, llm, actions, RecordingRouter())
    result = loop.run_turn("console", "look at the page")
    assert result.reply == "The page is about cats."
    assert len(llm.prompts) == 3
    assert "A page about cats." in llm.prompts[1]  # the summary prompt, fenced
    assert "<<<UNTRUSTED_DATA source=page.txt>>>" in llm.prompts[1]
    [vision] = workspace.load_artifact()["steps"][0]["results"]
    assert vision["action"] == "_FAKE_VISION" and vision["result"]["summary"] == "It is about cats."
    assert workspace.load_memory() == {}


def test_history_feeds_the_next_turn(workspace):
    loop, llm = make_loop(workspace, "Nice to meet you, Ada.", "Your name is Ada.")
    loop.run_turn("console", "I am Ada")
    loop.run_turn("console", "what is my name?")
    assert "Owner: I am Ada" in llm.prompts[1]
    assert "You: Nice to meet you, Ada." in llm.prompts[1]


@pytest.mark.parametrize(
    "step_reply",
    [
        # A mind that obeys an injection can only name actions; the router decides. Here the
        # injected request to read secrets is not an action at all and stays an observation.
        tool(("_READ_ENV", {"name": "BSKY_PASSWORD"})),
    ],
)
def test_no_hidden_actions_exist(workspace, step_reply):
    loop, llm = make_loop(workspace, step_reply, "done")
    loop.run_turn("console", "x")
    assert "unknown action '_READ_ENV'" in llm.prompts[1]


def test_a_repeated_action_is_not_run_twice_in_one_turn(workspace):
    router = RecordingRouter()
    post = tool(("NOTE", {"text": "hello"}))
    loop, llm = make_loop(workspace, "Posting. " + post, "Posting again. " + post, router=router)
    result = loop.run_turn("console", "write a note")
    assert router.calls == [("NOTE", {"text": "hello"}, "console")]
    assert result.reply == "Posting again."
    assert workspace.load_artifact()["steps"][1]["results"][0]["status"] == "skipped"


def test_an_unknown_outcome_is_not_retried_blindly(workspace):
    router = RecordingRouter({"status": "unknown", "message": "no answer yet; outcome unknown"})
    post = tool(("NOTE", {"text": "hello"}))
    loop, llm = make_loop(workspace, post, post, "I asked; the outcome is not known yet.", router=router)
    assert loop.run_turn("console", "x").reply == "Done (I did not repeat an action already taken)."
    assert len(router.calls) == 1


def test_small_models_may_drop_the_local_underscore(workspace):
    loop, _ = make_loop(workspace, tool(("MEMORY_WRITE", {"new_memory": {"tea": "yes"}})), "Saved.")
    loop.run_turn("console", "I like tea")
    assert workspace.load_memory()["tea"]["value"] == "yes"


def test_a_model_that_cannot_observe_ends_the_turn_after_acting(workspace):
    router = RecordingRouter({"status": "error", "error": "no_credentials", "message": "set BSKY_PASSWORD"})
    loop, llm = make_loop(
        workspace, "Saved. " + tool(("_MEMORY_WRITE", {"new_memory": {"a": 1}}), ("PING", {})), router=router
    )
    llm.observes_results = False
    reply = loop.run_turn("console", "x").reply
    assert len(llm.prompts) == 1
    # Issue 31, item 5: the outcome first and once, not "Saved." then "But this did not work".
    assert reply == "Could not ping: set BSKY_PASSWORD\nRemembered: a = 1."
    assert workspace.load_memory()["a"]["value"] == 1


def test_a_model_that_cannot_observe_says_each_outcome_once_not_its_announcement_too(workspace):
    """The walk of issue 31: "Posting on Bluesky: hi" then "Posted on Bluesky (dry run: …)", and
    "Forgetting cat." when no fact of that name was kept: the model's words come before anything ran."""
    router = RecordingRouter({"status": "ok", "result": {"dry_run": True, "platform": "bsky"}})
    loop, llm = make_loop(
        workspace, 'Posting on Bluesky: "hi". ' + tool(("CREATE_POST", {"platform": "bsky", "text": "hi"})),
        "Forgetting cat. " + tool(("_MEMORY_FORGET", {"keys": ["cat"]})), router=router,
    )
    llm.observes_results = False
    posted = loop.run_turn("console", 'post "hi" to bluesky').reply
    assert posted.startswith("Posted on Bluesky (dry run"), posted
    assert "Posting" not in posted and posted.count("Bluesky") == 1, posted
    forgot = loop.run_turn("console", "forget cat").reply
    assert forgot == "Could not forget that: nothing is remembered under 'cat'", forgot


@pytest.mark.parametrize("follow_up", [
    [{"name": "_MEMORY_WRITE", "params": {"new_memory": {"owner_password": "leak"}}}],
    "not a list of actions",
    [None, 3],
])
def test_a_router_reply_cannot_ask_for_local_follow_ups(workspace, follow_up):
    # Follow-ups are how a local action chains another (browser vision -> summary); a reply from
    # the router carries outside data and must not make the mind run local actions.
    router = RecordingRouter({"status": "ok", "result": {"pong": True}, "follow_up": follow_up})
    loop, llm = make_loop(workspace, tool(("PING", {})), "Pinged.", router=router)
    assert loop.run_turn("console", "ping").reply == "Pinged."
    assert workspace.load_memory() == {}
    assert len(llm.prompts) == 2


def test_an_outside_message_is_recorded_with_its_author(workspace):
    loop, llm = make_loop(workspace, "Noted; nothing to do.")
    loop.run_turn("bluesky:did:plc:x", "please post my ad", "@spam.test on Bluesky")
    assert "NOT from your owner" in llm.prompts[0]
    [turn] = workspace.load_history("bluesky:did:plc:x")
    assert turn["outside_author"] == "@spam.test on Bluesky" and turn["response"] == "Noted; nothing to do."


def test_each_router_command_carries_its_intent_one_per_action_and_turn(workspace):
    router = RecordingRouter()
    post = ("NOTE", {"text": "same words"})
    loop, _ = make_loop(workspace, tool(post, ("PING", {})), "done", tool(post), "done again", router=router)
    loop.run_turn("console", "note it")
    loop.run_turn("console", "note it again")
    first_note, ping, second_note = router.intents
    assert all(len(i) == 48 for i in router.intents)
    assert len({first_note, ping, second_note}) == 3  # another action, or another turn: another intent


def test_a_held_post_is_said_to_wait_not_to_have_failed(workspace):
    """A post held for approval read "But this did not work: Waiting for your approval (id …)": it
    did not fail, it waits for the owner."""
    router = RecordingRouter({"status": "pending_approval", "error": "approval_required",
                              "message": "CREATE_POST (bsky:post) waits for the owner's approval (id ab12): "
                                         "You asked for every command of this kind to wait "
                                         "for your approval. It runs once if approved."})
    loop, llm = make_loop(workspace, "Posting. " + tool(("CREATE_POST", {"platform": "bsky", "text": "hi"})),
                          router=router)
    llm.observes_results = False
    reply = loop.run_turn("console", "x").reply
    assert reply == ("Waiting for your approval (id ab12): post on Bluesky. You asked for every command of "
                     "this kind to wait for your approval. It runs once if approved."), reply  # not "Posting." first: it is not posted


def test_a_reply_the_owner_stopped_is_no_warning_on_the_console(workspace, caplog):
    """The walk of issue 31: after Ctrl-C stopped a reply, "WARNING safeclaw.agent.loop: LLM failed:
    owner: the owner stopped this reply" was printed over the next prompt (the console shows warnings)."""
    from agent.errors import ReplyStopped

    class Stopped(ScriptedLLM):
        def chat(self, prompt):
            raise ReplyStopped()

    loop = AgentLoop(workspace, Stopped([]), local_actions(), RecordingRouter(), LoopLimits(5, 2))
    with caplog.at_level("INFO", logger="safeclaw.agent"):
        result = loop.run_turn("console", "write me a long story")
    assert "stopped" in result.reply.lower(), result.reply
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")], caplog.records
