"""Dismissing cookie and consent banners before the screenshot.

One script runs in the page (and in a bounded number of its iframes): it clicks the first
visible button of a well-known consent framework, else the first visible button or link
whose whole label is an "accept"/"agree"/"OK" phrase in one of a few languages. Only short
labels match exactly, so "Accept the terms of sale and pay" is never clicked.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

log = logging.getLogger("safeclaw.agent.consent")

MAX_FRAMES = 5
SETTLE_SECONDS = 0.5

# Accept buttons of common consent frameworks (OneTrust, Cookiebot, Didomi, Quantcast, TrustArc,
# Osano, Usercentrics, Sourcepoint, Google, Complianz, CookieYes, Iubenda, Klaro, Borlabs, …).
FRAMEWORK_SELECTORS = [
    "#onetrust-accept-btn-handler",
    "#CybotCookiebotDialogBodyLevelButtonLevelOptinAllowAll",
    "#CybotCookiebotDialogBodyButtonAccept",
    "#didomi-notice-agree-button",
    ".qc-cmp2-summary-buttons button[mode='primary']",
    "#truste-consent-button",
    ".osano-cm-accept-all",
    "button[data-testid='uc-accept-all-button']",
    "button.sp_choice_type_11",
    "#L2AGLb",
    ".fc-cta-consent",
    ".cmplz-accept",
    ".cky-btn-accept",
    ".iubenda-cs-accept-btn",
    ".klaro .cm-btn-accept-all",
    "#BorlabsCookieBox a._brlbs-btn-accept-all",
    "#axeptio_btn_acceptAll",
    "#hs-eu-confirmation-button",
    ".cc-allow",
    ".cc-dismiss",
    "#cookie_action_close_header",
    "[data-cookiefirst-action='accept']",
    "#accept-cookie-notification",
    "#gdpr-cookie-accept",
]

# Whole labels (lower-case, trimmed, trailing punctuation dropped) that accept or dismiss.
ACCEPT_LABELS = [
    "accept", "accept all", "accept all cookies", "accept cookies", "i accept", "accept & close",
    "accept and close", "agree", "i agree", "agree and close", "agree & close", "allow", "allow all",
    "allow all cookies", "allow cookies", "ok", "okay", "got it", "i understand", "understood",
    "yes, i agree", "that's ok", "consent",
    # de
    "alle akzeptieren", "akzeptieren", "zustimmen", "alle zulassen", "einverstanden",
    "ich stimme zu", "alles akzeptieren", "verstanden",
    # fr
    "accepter", "tout accepter", "j'accepte", "accepter et fermer", "autoriser tous les cookies", "d'accord",
    # es / it / pt / nl / pl / sv / da
    "aceptar", "acepto", "aceptar todo", "aceptar todas", "accetta", "accetto", "accetta tutto",
    "accetta tutti", "aceitar", "aceitar tudo", "aceito", "accepteren", "alles accepteren", "akkoord",
    "zaakceptuj", "akceptuję", "zgadzam się", "godkänn", "acceptera alla", "accepter alle", "tillad alle",
]

_DISMISS_SCRIPT = """
const selectors = arguments[0];
const labels = new Set(arguments[1]);
function visible(el) {
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return false;
  const s = window.getComputedStyle(el);
  return s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0';
}
function roots() {
  const out = [document];
  for (let i = 0; i < out.length && out.length < 50; i++) {
    for (const el of out[i].querySelectorAll('*')) {
      if (el.shadowRoot) out.push(el.shadowRoot);
    }
  }
  return out;
}
function label(el) {
  const raw = (el.innerText || el.value || el.getAttribute('aria-label') || '').trim();
  return raw.toLowerCase().replace(/\\s+/g, ' ').replace(/[.!\\u2713\\u2714]+$/, '').trim();
}
const all = roots();
for (const root of all) {
  for (const sel of selectors) {
    for (const el of root.querySelectorAll(sel)) {
      if (visible(el)) { el.click(); return 'framework:' + sel; }
    }
  }
}
const clickable = "button, a, [role='button'], input[type='button'], input[type='submit']";
for (const root of all) {
  for (const el of root.querySelectorAll(clickable)) {
    const text = label(el);
    if (text.length > 0 && text.length <= 40 && labels.has(text) && visible(el)) {
      el.click(); return 'label:' + text;
    }
  }
}
return null;
"""


def is_web_frame(src: object) -> bool:
    """An iframe the page itself can show: http(s), or none (its own document, about:blank)."""
    source = str(src or "").strip().lower()
    return not source or source.startswith(("http://", "https://", "about:blank"))


def click_accept(driver: Any) -> str | None:
    """Click one accept button in the current document; returns what was clicked, or None."""
    clicked = driver.execute_script(_DISMISS_SCRIPT, FRAMEWORK_SELECTORS, ACCEPT_LABELS)
    return str(clicked) if clicked else None


def dismiss_consent_banners(driver: Any, max_frames: int = MAX_FRAMES) -> list[str]:
    """Dismiss banners in the page and its first `max_frames` iframes; returns what was clicked.

    A failure here (a frame that went away, a script error) never fails the visit: a banner
    that stays only makes the screenshot less useful.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    clicked: list[str] = []
    try:
        hit = click_accept(driver)
        if hit:
            clicked.append(hit)
        frames = driver.find_elements(By.CSS_SELECTOR, "iframe")[:max_frames]
    except WebDriverException as exc:
        log.info("consent banner check failed: %s", exc.msg)
        return clicked
    for index, frame in enumerate(frames):
        try:
            if not is_web_frame(frame.get_attribute("src")):
                continue  # a frame the page may not show (file:, chrome-error): entering it hangs
            driver.switch_to.frame(frame)
            hit = click_accept(driver)
            if hit:
                clicked.append(f"iframe[{index}] {hit}")
        except WebDriverException as exc:
            log.info("consent check in iframe %d failed: %s", index, exc.msg)
        finally:
            with contextlib.suppress(WebDriverException):
                driver.switch_to.default_content()
    if clicked:
        time.sleep(SETTLE_SECONDS)  # let the banner's own script hide it before the screenshot
    return clicked
