"""The page as a newcomer first opens it. The token given in the address of a tab already open at
the token form: the docs say "open …/#token=<token>", but a tab already on the page only changes
its fragment (no reload), and the page read the token only when it loaded, so it stayed at the
form. A part that is off by choice says how to turn it on, not how to fix it."""

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


def test_a_part_that_is_off_says_how_to_turn_it_on_not_how_to_fix_it(dashboard, browser):
    """A fresh install's autonomy (off by default) read "OFF Autonomy is off · How to fix:
    channels.autonomy.enabled ...", as if something were broken."""
    browser.get(dashboard + f"#token={TOKEN}")
    until(browser, "document.querySelector('[data-part=\"autonomy\"] .fix')", "autonomy's line")
    lines = browser.execute_script(
        "return [...document.querySelectorAll('#parts li')].map(li => [li.dataset.state, li.textContent])")
    off = [text for state, text in lines if state == "off" and "Autonomy" in text]
    assert off and "To turn it on: set channels.autonomy.enabled to true in agent/config.json" in off[0], lines
    assert not [text for state, text in lines if state == "off" and "How to fix" in text], lines
    shot(browser, "parts-off")
