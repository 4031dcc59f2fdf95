"""Every way a run can go wrong mid-way: the budget, a model answering junk (on each provider's
JSON mode), a router that is down, slow, or answering garbage. Each ends in a clear message or
the best attempt so far, never a traceback; a call the budget refuses is never sent."""

import json

import pytest

from agent.config.sections import LLMSettings
from agent.cost.budget import BudgetSettings
from agent.cost.metered import MeteredLLM
from agent.errors import BudgetExhausted
from agent.explain import ExplainError, explain_post, render_text
from agent.explain.command import explain_reply
from agent.explain.prompts import CRITIQUE_SCHEMA
from agent.llm.gemini.llm import GeminiLLM
from agent.llm.local.llm import LocalLLM
from agent.llm.ollama.llm import OllamaLLM
from agent.llm.openai.llm import OpenAILLM
from agent.llm.scripted.llm import ScriptedLLM
from tests.agent.explain.test_explain_post import BULLETS, seed, step, verdict
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_ollama import FakeOllama
from tests.support.fake_openai import FakeOpenAI

KEY = "sk-test-" + "explain-0000"
POST_URL = "https://bsky.app/profile/alice.test/post/3l2abc"


class Allowance:
    """A budget that allows `calls` LLM calls, then refuses (before anything is sent)."""

    def __init__(self, calls):
        self.settings = BudgetSettings()
        self.left = calls

    def check(self, price, projected):
        if self.left <= 0:
            raise BudgetExhausted("daily", 2.0, 2.0)
        self.left -= 1

    def record(self, *args):
        pass


def budgeted(replies, calls):
    inner = ScriptedLLM(replies)
    return MeteredLLM(inner, Allowance(calls)), inner


def test_a_budget_spent_before_any_answer_is_its_own_error_and_nothing_is_sent(router, bsky):
    url, _ = seed(bsky)
    llm, inner = budgeted([step("search", "x")], calls=0)
    with pytest.raises(ExplainError) as caught:
        explain_post(url, router, llm)
    assert caught.value.kind == "budget_exhausted" and "budget is spent" in caught.value.message
    assert inner.prompts == []


def test_a_budget_that_runs_out_before_the_critique_returns_the_checked_answer_not_passing(router, bsky):
    url, _ = seed(bsky)
    llm, inner = budgeted(
        [step("search", "enshittification"), step("finish", bullets=BULLETS), verdict("pass")], 2
    )
    lines = []
    result = explain_post(url, router, llm, progress=lines.append)
    assert not result.passed and result.bullets == BULLETS and result.problems == []
    assert "budget" in result.stopped and "budget" in result.verdict_reason
    assert len(inner.prompts) == 2 and result.llm_calls == 2  # the critique was refused, not sent
    assert "returning the best attempt so far" in lines[-1]


def test_a_budget_that_runs_out_mid_loop_returns_the_best_attempt(router, bsky):
    url, _ = seed(bsky)
    replies = [
        step("search", "enshittification"),
        step("finish", bullets=BULLETS),
        verdict("fail", "too vague"),
    ]
    llm, inner = budgeted([*replies, step("search", "more")], 3)
    result = explain_post(url, router, llm)
    assert not result.passed and result.bullets == BULLETS and result.verdict_reason == "too vague"
    assert "LLM budget ran out" in result.stopped and result.iterations == 3
    assert len(inner.prompts) == 3
    shown = render_text(result)  # what the console, Telegram and the CLI print
    assert "(Stopped early: the LLM budget ran out" in shown and "best attempt so far" in shown
    assert f"• {BULLETS[0]}" in shown


JUNK_STEPS = [
    "not json",
    json.dumps({"action": "CREATE_POST", "query": "", "url": "", "bullets": []}),
    json.dumps({"action": "like"}),
    json.dumps(["finish"]),
    json.dumps({"action": "finish", "query": "", "url": "", "bullets": "one string"}),
]


def test_junk_steps_are_fed_back_not_fatal(router, bsky):
    url, _ = seed(bsky)
    llm = ScriptedLLM(
        [*JUNK_STEPS, step("search", "enshittification"), step("finish", bullets=BULLETS), verdict("pass")]
    )
    result = explain_post(url, router, llm)
    assert result.passed and result.iterations == len(JUNK_STEPS) + 2
    assert "not one JSON object of the asked form" in llm.prompts[1]


def test_only_junk_is_a_clear_error(router, bsky):
    url, _ = seed(bsky)
    with pytest.raises(ExplainError) as caught:
        explain_post(url, router, ScriptedLLM(JUNK_STEPS), max_iterations=len(JUNK_STEPS))
    assert caught.value.kind == "llm_failed" and "no usable answer" in caught.value.message


JUNK_VERDICTS = [
    "PASS",
    json.dumps({"verdict": "PASS", "reason": "ok"}),
    json.dumps({"verdict": "pass"}),
    json.dumps({"verdict": "pass", "reason": "ok", "override": True}),
    '{"verdict": "pass", "reason": "ok"',
]


def _settings(provider, model, **env):
    return LLMSettings.from_env(env, provider=provider, model=model, timeout=5.0)


def _providers():
    def openai(fake):
        return OpenAILLM(
            _settings("openai", "gpt-4o-mini", OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=KEY)
        )

    def ollama(fake):
        return OllamaLLM(_settings("ollama", "llama3.1:8b", OLLAMA_HOST=fake.url))

    def gemini(fake):
        return GeminiLLM(
            _settings("gemini", "gemini-2.5-flash", GEMINI_BASE_URL=fake.url, GEMINI_API_KEY=KEY)
        )

    return [(FakeOpenAI, openai), (FakeOllama, ollama), (FakeGemini, gemini)]


@pytest.mark.parametrize("fake_class,make", _providers(), ids=["openai", "ollama", "gemini"])
def test_junk_critique_json_in_each_providers_json_mode_never_passes(router, bsky, fake_class, make):
    url, _ = seed(bsky)
    with fake_class() as fake:
        fake.enqueue(step("search", "enshittification"))
        for junk in JUNK_VERDICTS:
            fake.enqueue(step("finish", bullets=BULLETS), junk)
        result = explain_post(url, router, make(fake), max_iterations=1 + len(JUNK_VERDICTS))
    assert not result.passed and result.bullets == BULLETS
    assert "the critique's answer was unusable" in result.verdict_reason


def test_junk_critique_json_from_the_scripted_provider_never_passes(router, bsky):
    url, _ = seed(bsky)
    replies = [step("search", "enshittification")]
    for junk in JUNK_VERDICTS:
        replies += [step("finish", bullets=BULLETS), junk]
    llm = ScriptedLLM(replies)
    result = explain_post(url, router, llm, max_iterations=1 + len(JUNK_VERDICTS))
    assert not result.passed and llm.schemas.count(CRITIQUE_SCHEMA) == len(JUNK_VERDICTS)


class FakeRouter:
    """Answers FETCH_POST and SEARCH_POSTS from a function; records every call."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def call(self, action, params, conversation, intent="", origin=None):
        self.calls.append(action)
        return self.answer(action, params)


GOOD_POST = {
    "id": "at://did:plc:" + "a" * 24 + "/app.bsky.feed.post/3l2abc",
    "url": POST_URL,
    "author": "alice.test",
    "text": "and so begins stage two on this app",
}
GARBAGE = [
    None,
    "ok",
    [],
    {"status": "ok", "result": "not a dict"},
    {"status": "ok", "result": {"post": "not a dict"}},
    {"status": "ok", "result": {"post": {"id": None}}},
    {"status": "strange"},
    {"status": "error"},
    {"status": "error", "error": ["x"], "message": {"y": 1}},
]


@pytest.mark.parametrize("reply", GARBAGE, ids=range(len(GARBAGE)))
def test_router_garbage_for_the_post_is_a_clear_error(reply):
    with pytest.raises(ExplainError) as caught:
        explain_post(POST_URL, FakeRouter(lambda action, params: reply), ScriptedLLM([]))
    assert caught.value.kind == "read_failed" and "router" in caught.value.message


MISSHAPEN_POST = {
    **GOOD_POST,
    "text": ["not", "text"],
    "author": {"handle": "x"},
    "images": "alt text?",
    "link": ["x"],
    "quoted": "a quote",
}
MISSHAPEN_THREAD = {
    "post": MISSHAPEN_POST,
    "parents": ["x", None, {"id": 5}, {"images": [1, "a", None]}],
    "replies": 7,
}
SEARCH_GARBAGE = {"posts": ["x", None, {"id": "at://nothing"}, {"id": 3, "text": None}, GOOD_POST]}


def test_a_misshapen_post_and_search_results_are_read_as_far_as_they_go():
    def answer(action, params):
        if action == "FETCH_POST":
            return {"status": "ok", "result": MISSHAPEN_THREAD}
        return {"status": "ok", "result": SEARCH_GARBAGE}

    llm = ScriptedLLM(
        [step("search", "stage two"), step("finish", bullets=["a [1]", "b [1]", "c [1]"]), verdict("pass")]
    )
    result = explain_post(POST_URL, FakeRouter(answer), llm)
    assert result.post_text == "" and result.author == ""
    assert [s["url"] for s in result.sources] == [POST_URL]


def test_a_router_that_does_not_answer_in_time_is_said_plainly():
    slow = FakeRouter(lambda action, params: {"status": "unknown", "message": "no answer within 30s yet"})
    with pytest.raises(ExplainError) as caught:
        explain_post(POST_URL, slow, ScriptedLLM([]))
    assert caught.value.kind == "router_timeout"
    assert "did not answer in time when asked to read the post from Bluesky" in caught.value.message and "try again" in caught.value.message
    assert explain_reply(POST_URL, slow, ScriptedLLM([])).startswith(
        "I could not explain that post: the router did not answer in time when asked to read the post from Bluesky"
    )


class FailingAfter:
    """The real router for the first `n` calls, then `reply` for every call."""

    def __init__(self, router, n, reply):
        self.router, self.n, self.reply = router, n, reply

    def call(self, action, params, conversation, intent="", origin=None):
        self.n -= 1
        return self.router.call(action, params, conversation) if self.n >= 0 else self.reply


@pytest.mark.parametrize(
    "reply,kind",
    [
        ({"status": "error", "error": "router_unreachable", "message": "Redis refused"}, "is it running"),
        ({"status": "unknown", "message": "no answer within 30s yet"}, "in time"),
    ],
)
def test_a_router_lost_mid_loop_returns_the_best_attempt(router, bsky, reply, kind):
    url, _ = seed(bsky)
    llm = ScriptedLLM(
        [
            step("search", "enshittification"),
            step("finish", bullets=BULLETS),
            verdict("fail", "vague"),
            step("search", "x"),
        ]
    )
    result = explain_post(url, FailingAfter(router, 2, reply), llm)
    assert not result.passed and result.bullets == BULLETS and kind in result.stopped


def test_a_failed_search_mid_loop_is_noted_and_the_loop_goes_on(router, bsky):
    url, _ = seed(bsky)

    class RateLimitedOnce(FailingAfter):
        def call(self, action, params, conversation, intent="", origin=None):
            if action == "SEARCH_POSTS" and params["query"] == "first":
                return {"status": "error", "error": "rate_limited", "message": "slow down"}
            return self.router.call(action, params, conversation)

    llm = ScriptedLLM(
        [
            step("search", "first"),
            step("search", "enshittification"),
            step("finish", bullets=BULLETS),
            verdict("pass"),
        ]
    )
    result = explain_post(url, RateLimitedOnce(router, 0, None), llm)
    assert (
        result.passed
        and "search 'first' failed: the router could not search Bluesky (slow down)"
        in llm.prompts[1]
    )


class CutOffLocal(LocalLLM):
    """The local provider with llama.cpp's generation replaced by replies that a grammar-bound
    model can still produce when it is cut off at its token limit (truncated JSON, nothing)."""

    def __init__(self, replies):
        super().__init__(LLMSettings(provider="local", model=""))
        self.replies = list(replies)
        self.grammars = []

    def _loaded(self):
        return object()

    def _generate(self, llama, prompt, options, deadline):
        self.grammars.append(options.get("grammar"))
        return self.replies.pop(0)


def test_junk_critique_from_the_local_providers_grammar_mode_never_passes(router, bsky):
    url, _ = seed(bsky)
    replies = [step("search", "enshittification")]
    for cut in ('{"verdict": "pass", "rea', '{"verdict": "pa', "   "):
        replies += [step("finish", bullets=BULLETS), cut]
    llm = CutOffLocal(replies)
    result = explain_post(url, router, llm, max_iterations=4)
    assert not result.passed and result.bullets == BULLETS
    assert all(grammar is not None for grammar in llm.grammars)  # every call was grammar-bound


def test_an_answer_after_searches_that_found_nothing_says_so(router, bsky):
    url, _ = seed(bsky)
    own = [b.replace("[2]", "[1]").replace("[3]", "[1]") for b in BULLETS]  # only the post itself to cite
    llm = ScriptedLLM(
        [step("search", "zzqx nothing"), step("finish", bullets=own), step("finish", bullets=own)]
    )
    result = explain_post(url, router, llm, max_iterations=3)
    assert not result.passed
    assert result.verdict_reason.startswith("Bluesky search found nothing for 'zzqx nothing'")
    assert "Bluesky search found nothing" in render_text(result)
