"""The house stays readable: no module of SafeClaw's own over 300 lines, and the router's redaction
(one pass over the secrets' spellings) stays small, not a list of every encoding ever seen."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "router", "protocol", "dashboard", "scripts")
MAX_MODULE_LINES = 300
REDACTION_MODULES = ("protocol/redaction.py", "protocol/transport_spellings.py")
MAX_REDACTION_LINES = 500


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_300_lines():
    long = {str(p.relative_to(REPO)): lines_of(p) for package in PACKAGES for p in (REPO / package).rglob("*.py")
            if lines_of(p) > MAX_MODULE_LINES}
    assert long == {}


def test_redaction_stays_under_500_lines():
    assert sum(lines_of(REPO / name) for name in REDACTION_MODULES) < MAX_REDACTION_LINES
