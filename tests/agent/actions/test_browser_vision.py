"""_BROWSER_VISION against pages on 127.0.0.1, in a real headless Chromium."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from agent.actions import ActionError
from agent.actions.browser_vision import browser_vision
from tests.agent.actions.processes import assert_all_quit
from tests.support.web_pages import INJECTION_MARKER, NORMAL_TEXT

pytestmark = pytest.mark.slow
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def saved(workspace, result, kind):
    return workspace.output_file(result["files"][kind])


def test_normal_page_is_saved_as_html_png_and_text_and_asks_for_a_summary(
        chromium, pages, make_ctx, workspace, browser_sessions):
    result = browser_vision({"url": pages.url("/normal")}, make_ctx())

    assert result["url"] == pages.url("/normal") and result["final_url"] == pages.url("/normal")
    assert result["title"] == "Fox page"
    assert result["flagged"] is False and result["flag_reasons"] == []
    text = saved(workspace, result, "txt").read_text(encoding="utf-8")
    assert NORMAL_TEXT in text and "Hello from the fox" in text
    assert NORMAL_TEXT in saved(workspace, result, "html").read_text(encoding="utf-8")
    png = saved(workspace, result, "png").read_bytes()
    assert png.startswith(PNG_SIGNATURE) and len(png) > 1000
    assert "script exhausted" in result["summary_error"]  # the summary is asked of the LLM at once
    assert all(path.startswith("output/browser_vision-") for path in result["files"].values())
    assert NORMAL_TEXT not in repr(result)  # the result carries no page text
    assert_all_quit(browser_sessions[0])


def test_two_visits_write_distinct_files(chromium, pages, make_ctx, workspace):
    first = browser_vision({"url": pages.url("/normal")}, make_ctx())
    second = browser_vision({"url": pages.url("/normal")}, make_ctx())

    assert set(first["files"].values()).isdisjoint(second["files"].values())
    for result in (first, second):
        assert all(saved(workspace, result, kind).is_file() for kind in ("html", "png", "txt"))


def test_consent_banner_covering_the_page_is_clicked_away(chromium, pages, make_ctx, workspace):
    result = browser_vision({"url": pages.url("/consent")}, make_ctx())

    html = saved(workspace, result, "html").read_text(encoding="utf-8")
    text = saved(workspace, result, "txt").read_text(encoding="utf-8")
    assert 'data-consent="accepted-by-click"' in html
    assert "We value your privacy" not in text and "The real article text." in text
    assert result["consent_dismissed"] == 1
    # The look-alike "Accept the terms of sale and pay" link was not followed.
    assert result["final_url"] == pages.url("/consent")


def test_consent_banner_inside_an_iframe_is_clicked_away(chromium, pages, make_ctx, workspace):
    result = browser_vision({"url": pages.url("/consent-iframe")}, make_ctx())

    html = saved(workspace, result, "html").read_text(encoding="utf-8")
    assert 'data-consent="accepted-in-iframe"' in html
    assert 'id="cmp"' not in html


def test_injection_page_is_flagged_and_the_result_has_no_raw_payload(chromium, pages, make_ctx, workspace):
    result = browser_vision({"url": pages.url("/injection")}, make_ctx())

    assert result["flagged"] is True
    assert {"detector", "tool_call", "template_token"} <= set(result["flag_reasons"])
    assert "<|im_start|>" not in result["title"] and "[token:im_start]" in result["title"]
    assert INJECTION_MARKER not in repr(result)
    # The .txt keeps the raw visible text (hidden-by-colour text included): sanitising is the summary's job.
    text = saved(workspace, result, "txt").read_text(encoding="utf-8")
    assert "<tool_code>" in text and INJECTION_MARKER in text


def test_slow_page_hits_the_page_load_timeout_and_the_browser_is_quit(
        chromium, pages, make_ctx, workspace, browser_sessions):
    ctx = make_ctx({"allow_private_addresses": True, "page_load_timeout": 2, "total_timeout": 30})

    with pytest.raises(ActionError, match=r"did not load within 2 s"):
        browser_vision({"url": pages.url("/slow")}, ctx)

    assert_all_quit(browser_sessions[0])
    assert list(workspace.output_dir.glob("browser_vision-*")) == []


def test_the_total_time_bound_caps_the_page_load(chromium, pages, make_ctx, browser_sessions):
    ctx = make_ctx({"allow_private_addresses": True, "page_load_timeout": 60, "total_timeout": 3})

    # The bound counts from the start of the visit: on a loaded machine Chromium's own start can use
    # it up before the page is asked for, and then the visit ends at the same bound, named the other way.
    total_bound = r"did not load within .* s \(browser.total_timeout\)|took longer than browser.total_timeout"
    with pytest.raises(ActionError, match=total_bound):
        browser_vision({"url": pages.url("/slow")}, ctx)
    assert_all_quit(browser_sessions[0])


def test_http_error_page_is_an_action_error(chromium, pages, make_ctx, workspace, browser_sessions):
    with pytest.raises(ActionError, match=r"HTTP 404"):
        browser_vision({"url": pages.url("/missing")}, make_ctx())
    assert_all_quit(browser_sessions[0])
    assert list(workspace.output_dir.glob("browser_vision-*")) == []


def test_dead_url_is_a_clear_action_error(chromium, make_ctx, browser_sessions):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the socket is closed

    with pytest.raises(ActionError) as refused:
        browser_vision({"url": f"http://127.0.0.1:{port}/"}, make_ctx())
    assert str(refused.value) == (f"could not open http://127.0.0.1:{port}/: the site refuses the connection: "
                                  "nothing answers at that address (is it running?) (ERR_CONNECTION_REFUSED)")
    assert_all_quit(browser_sessions[0])


def test_a_redirect_is_checked_before_it_leaves_and_a_refused_target_saves_nothing(
        chromium, pages, make_ctx, workspace, monkeypatch):
    from agent.actions import guard_proxy
    from agent.actions.url_guard import check_url

    def guard_refusing_localhost(url, allow_private=False):
        if urlsplit(str(url)).hostname == "localhost":
            raise ActionError("refused: localhost stands in for a private address here")
        return check_url(url, allow_private)

    monkeypatch.setattr(guard_proxy, "check_url", guard_refusing_localhost)
    target = pages.url("/normal").replace("127.0.0.1", "localhost")

    with pytest.raises(ActionError, match=r"the guard refused requests to localhost:"):
        browser_vision({"url": pages.url(f"/redirect?to={target}")}, make_ctx())
    assert "/normal" not in pages.requests  # refused before it left
    assert list(workspace.output_dir.glob("browser_vision-*")) == []


def test_a_redirect_to_a_file_url_is_never_followed(chromium, pages, make_ctx, workspace):
    with pytest.raises(ActionError, match=r"could not open"):
        browser_vision({"url": pages.url("/redirect?to=file:///etc/passwd")}, make_ctx())
    assert list(workspace.output_dir.glob("browser_vision-*")) == []


def test_missing_browser_is_a_clear_action_error(make_ctx, tmp_path):
    ctx = make_ctx(env={"SAFECLAW_CHROMIUM": str(tmp_path / "no-chromium")})

    with pytest.raises(ActionError, match=r"chromium not found at .*no-chromium.*SAFECLAW_CHROMIUM"):
        browser_vision({"url": "http://127.0.0.1:9/"}, ctx)


def test_unreachable_remote_webdriver_is_a_clear_action_error(make_ctx):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ctx = make_ctx(env={"REMOTE_BROWSER_SERVER": f"http://127.0.0.1:{port}"})

    with pytest.raises(ActionError, match=r"could not start the remote WebDriver at http://127.0.0.1"):
        browser_vision({"url": "http://127.0.0.1:9/"}, ctx)
