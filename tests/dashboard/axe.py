"""axe-core (vendored under vendor/axe-core) run inside the page the browser shows."""

from __future__ import annotations

import hashlib
from pathlib import Path

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"


def serious_findings(driver) -> list[str]:
    """Every serious or critical axe finding on the page now, one line each (rule, nodes)."""
    source = AXE.read_bytes()
    assert hashlib.sha256(source).hexdigest() == AXE_SHA256, "vendored axe-core changed; see its README"
    driver.execute_script(source.decode("utf-8"))
    driver.set_script_timeout(60)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then((r) => done(r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5)}))))"
        ".catch((e) => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(v['nodes'])}"
        for v in result
        if v["impact"] in ("serious", "critical")
    ]
