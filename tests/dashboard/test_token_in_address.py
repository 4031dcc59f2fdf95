"""The token given in the address of a tab already open at the token form: the docs say "open
…/#token=<token>", but a tab already on the page only changes its fragment (no reload), and the
page read the token only when it loaded, so it stayed at the form."""

from __future__ import annotations

import pytest

from tests.dashboard.conftest import shot, until
from tests.dashboard.helpers import TOKEN

pytestmark = pytest.mark.slow


def test_the_token_put_in_the_address_of_the_open_tab_opens_the_page(dashboard, browser):
    browser.get(dashboard)
    until(browser, "!document.getElementById('token-form').hidden", "the token form")
    browser.get(dashboard + f"#token={TOKEN}")  # the same page: only the fragment changes
    until(browser, "document.getElementById('token-form').hidden", "the form gone")
    until(browser, "document.querySelector('[data-part=\"redis\"]')", "the parts' lines")
    assert TOKEN not in browser.current_url
    shot(browser, "token-in-address")
