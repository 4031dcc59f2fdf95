"""router.platforms.http_errors: the shared mapping of platform failures to SkillError kinds."""

import httpx
import pytest
import requests

from router.errors import SkillError
from router.platforms.http_errors import error_for_status, error_from_exception, retry_after_seconds

SECRET = "hunter2-SECRET"


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, "auth_failed"),
        (403, "auth_failed"),
        (429, "rate_limited"),
        (500, "request_failed"),
        (503, "request_failed"),
        (404, "not_found"),
        (400, "internal_error"),
        (422, "internal_error"),
    ],
)
def test_status_kinds(status, kind):
    assert error_for_status("x", status).kind == kind


def test_retry_after_forms():
    now = 1_700_000_000.0
    assert retry_after_seconds({"Retry-After": "12"}, now) == 12
    assert retry_after_seconds({"ratelimit-reset": str(int(now) + 30)}, now) == 30
    assert retry_after_seconds({"x-rate-limit-reset": str(int(now) + 5)}, now) == 5
    assert retry_after_seconds({"X-RateLimit-Reset": "2023-11-14T22:13:40+00:00"}, now) == 20
    assert retry_after_seconds({"Retry-After": "Tue, 14 Nov 2023 22:13:40 GMT"}, now) == 20
    assert retry_after_seconds({"retry-after": "soon"}, now) is None
    assert retry_after_seconds(None) is None
    error = error_for_status("x", 429, {"Retry-After": "7"})
    assert error.retry_after == 7 and "7" in error.message


def test_httpx_errors():
    request = httpx.Request("GET", "http://127.0.0.1/")
    assert error_from_exception(httpx.ReadTimeout("t", request=request), "x").kind == "request_failed"
    assert error_from_exception(httpx.ConnectError("c", request=request), "x").kind == "request_failed"
    response = httpx.Response(401, request=request, text=f'{{"error": "{SECRET}"}}')
    error = error_from_exception(httpx.HTTPStatusError(SECRET, request=request, response=response), "x")
    assert error.kind == "auth_failed" and SECRET not in error.message


def test_requests_errors_and_chained_causes():
    assert error_from_exception(requests.Timeout(SECRET), "x").kind == "request_failed"
    try:
        try:
            raise requests.ConnectionError(SECRET)
        except requests.ConnectionError as inner:
            raise RuntimeError(SECRET) from inner
    except RuntimeError as outer:
        error = error_from_exception(outer, "x")
    assert error.kind == "request_failed" and SECRET not in error.message


def test_anything_else_is_internal_error_without_its_text():
    error = error_from_exception(ValueError(SECRET), "x", "post")
    assert error.kind == "internal_error" and SECRET not in str(error) and "ValueError" in error.message
    same = SkillError("not_supported", "no")
    assert error_from_exception(same, "x") is same
