"""The eval report shows outside text (posts, search results, the model's bullets, the judge's
reason) as text: an injected <script> or <img onerror> does not run in a real Chromium, and a
link goes nowhere but a bsky.app page. And the harness refuses runs that would score nothing."""

import json
import shutil

import pytest
from selenium.common.exceptions import NoAlertPresentException

from evals.__main__ import main
from evals.report import render_report
from tests.conftest import REPO_ROOT
from tests.dashboard.conftest import browser  # noqa: F401  (the headless Chromium fixture)

ARTIFACTS = REPO_ROOT / "tests" / "artifacts" / "explain_eval"
SCRIPT = "<script>window.__pwned = 'script';alert(1)</script>"
IMG = "<img src=x onerror=\"window.__pwned='img';alert(2)\">"
SVG = "<svg onload=\"window.__pwned='svg'\"></svg>"


def hostile_dataset(path):
    bullets = [
        f"Ad load is the share of a feed given to ads {IMG} [2].",
        f"Stage two of enshittification favours advertisers over users {SCRIPT} [2][3].",
        f"Users notice when a third of posts are sponsored {SVG} [3].",
    ]
    item = {
        "id": "hostile-<b>x</b>",
        "category": "tech_jargon",
        "target": "p",
        "posts": [
            {"key": "c1", "author": "ads.test", "text": f"Feeds now show an ad every third post {SCRIPT}"},
            {"key": "c2", "author": "img.test", "text": f"Stage two: the platform squeezes users {IMG}"},
            {"key": "p", "author": "user.test", "text": f"and so begins stage two {SVG}"},
        ],
        "gold_summary": f"Enshittification's second stage shifts value from users to advertisers. {IMG}",
        "script": [
            {"action": "search", "query": "stage two", "url": "", "bullets": []},
            {"action": "finish", "query": "", "url": "", "bullets": bullets},
            {"verdict": "pass", "reason": f"fine {SCRIPT}"},
            {"score": 7, "reason": f"covers it {IMG}"},
        ],
        "live_url": None,
    }
    path.write_text(json.dumps({"description": "hostile", "items": [item]}))
    return path


def test_injected_markup_in_the_report_never_runs_in_chromium(tmp_path, browser):  # noqa: F811
    out = tmp_path / "out"
    assert (
        main(
            [
                "explain",
                "--provider",
                "scripted",
                "--dataset",
                str(hostile_dataset(tmp_path / "d.json")),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    (html_file,) = out.glob("explain-*.html")
    results = json.loads(next(out.glob("explain-*.json")).read_text())
    assert results["summary"]["posts"] == 1 and results["posts"][0]["bullets"]
    browser.get(html_file.as_uri())
    row = browser.find_element("css selector", "tr.post")
    row.find_element("tag name", "summary").click()
    with pytest.raises(NoAlertPresentException):
        _ = browser.switch_to.alert.text
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.find_elements("css selector", "tr.post img, tr.post svg, tr.post script") == []
    shown = row.text
    assert "onerror" in shown and "<script>" in shown  # shown as text, literally
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "report_hostile_text.png"))
    shutil.copyfile(html_file, ARTIFACTS / "report_hostile.html")


def test_a_source_link_only_ever_points_to_bsky_app():
    post = {
        "id": "x",
        "category": "tech_jargon",
        "url": "u",
        "gold_summary": "g",
        "passed": False,
        "score": 0,
        "bullets": ["b"],
        "judge_reason": "r",
        "sources": [
            {"n": 1, "url": "javascript:alert(1)", "author": "a", "text": "t"},
            {"n": 2, "url": "https://evil.test/x", "author": "a", "text": "t"},
            {"n": 3, "url": "https://bsky.app/profile/a.test/post/3l2", "author": "a", "text": "t"},
        ],
    }
    summary = {
        k: 0
        for k in (
            "pass_rate",
            "mean_score",
            "explainer_pass_rate",
            "citation_validity_rate",
            "bullets_per_answer",
            "iterations_per_post",
            "llm_calls_per_post",
            "tokens_per_post",
            "errors",
            "passed",
            "posts",
        )
    }
    html = render_report(
        {"summary": summary, "posts": [post], "provider": "p", "model": "m", "live": False, "started_at": "t"}
    )
    assert 'href="javascript' not in html.lower() and "(javascript:alert(1))" in html
    assert 'href="https://evil.test' not in html and 'href="https://bsky.app/profile/a.test/post/3l2"' in html


@pytest.mark.parametrize(
    "args,said",
    [
        (["--only", "no-such-item"], "no item with id 'no-such-item'"),
        (["--live", "--provider", "scripted"], "live_url"),
        (["--provider", "ollama"], "cannot reach Ollama"),
    ],
)
def test_a_run_that_would_score_nothing_is_refused(tmp_path, capsys, monkeypatch, args, said):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    out = tmp_path / "out"
    assert main(["explain", *args, "--out", str(out)]) == 2
    assert said in capsys.readouterr().err and not out.exists()
