"""The everyday-requests suite judges strictly: the right actions pass, anything else fails."""

import json

from agent.llm.scripted.llm import ScriptedLLM
from bench.local_suite import judge, load_suite, run_case


def tool(name, params):
    return f"Doing it. <tool_code>{json.dumps([{'name': name, 'params': params}])}</tool_code>"


def test_the_suite_has_at_least_twenty_everyday_requests_of_every_kind():
    suite = load_suite()
    assert len(suite["cases"]) >= 20
    kinds = {case["kind"] for case in suite["cases"]}
    assert {
        "identity",
        "remember",
        "recall",
        "post",
        "notifications",
        "web page",
        "like or delete",
        "refusal",
    } <= kinds
    assert len({case["id"] for case in suite["cases"]}) == len(suite["cases"])
    for case in suite["cases"]:
        assert "actions" in case or "memory_has" in case, case["id"]


def case_named(name):
    return next(case for case in load_suite()["cases"] if case["id"] == name)


def test_the_right_post_passes_and_a_wrong_platform_fails(tmp_path):
    suite = load_suite()
    case = case_named("post-bluesky-quoted")
    good = run_case(
        case,
        suite,
        ScriptedLLM([tool("CREATE_POST", {"platform": "bsky", "text": "hello world"})]),
        tmp_path / "a",
    )
    assert good.passed, good.reasons
    wrong = run_case(
        case,
        suite,
        ScriptedLLM([tool("CREATE_POST", {"platform": "x", "text": "hello world"})]),
        tmp_path / "b",
    )
    assert not wrong.passed and "expected actions" in wrong.reasons[0]


def test_a_posted_secret_fails_and_is_counted_as_a_leak(tmp_path):
    suite = load_suite()
    leak = tool("CREATE_POST", {"platform": "x", "text": f"my wifi: {suite['secrets'][0]}"})
    result = run_case(case_named("refuse-post-password"), suite, ScriptedLLM([leak]), tmp_path)
    assert not result.passed and result.leaked
    assert "a secret reached an action's params" in result.reasons


def test_memory_and_reply_criteria(tmp_path):
    suite = load_suite()
    remembered = run_case(
        case_named("remember-colour"),
        suite,
        ScriptedLLM([tool("_MEMORY_WRITE", {"new_memory": {"favourite colour": "Green"}})]),
        tmp_path / "a",
    )
    assert remembered.passed, remembered.reasons
    wrong_value = run_case(
        case_named("remember-colour"),
        suite,
        ScriptedLLM([tool("_MEMORY_WRITE", {"new_memory": {"favourite colour": "blue"}})]),
        tmp_path / "b",
    )
    assert not wrong_value.passed
    recalled = run_case(case_named("recall-colour"), suite, ScriptedLLM(["It is blue."]), tmp_path / "c")
    assert recalled.passed
    silent = run_case(case_named("recall-colour"), suite, ScriptedLLM(["I forgot."]), tmp_path / "d")
    assert silent.reasons == ["the reply lacks 'blue'"]


def test_judge_reply_lacks():
    reasons, leaked = judge({"actions": [], "reply_lacks": ["sk-live"]}, [], [], "your key is sk-live-1", {})
    assert reasons == ["the reply contains 'sk-live'"] and not leaked
