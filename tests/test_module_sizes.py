"""The house stays readable: no module of SafeClaw's own over 300 lines, and the router's redaction
(one pass over the secrets' spellings) stays small, not a list of every encoding ever seen."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "router", "protocol", "dashboard", "scripts", "bench", "evals")
MAX_MODULE_LINES = 300
REDACTION_MODULES = ("protocol/redaction.py", "protocol/transport_spellings.py")
MAX_REDACTION_LINES = 500
# A command's way through the router (docs/router.md), read in one sitting: no function over 40 lines.
COMMAND_WAY = ("router/queue", "router/policy", "router/pipeline.py")
MAX_FUNCTION_LINES = 40


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_300_lines():
    long = {str(p.relative_to(REPO)): lines_of(p) for package in PACKAGES for p in (REPO / package).rglob("*.py")
            if lines_of(p) > MAX_MODULE_LINES}
    assert long == {}


def test_redaction_stays_under_500_lines():
    assert sum(lines_of(REPO / name) for name in REDACTION_MODULES) < MAX_REDACTION_LINES


def test_no_function_on_a_commands_way_is_over_40_lines():
    paths = [p for way in COMMAND_WAY for p in ([REPO / way] if way.endswith(".py") else (REPO / way).rglob("*.py"))]
    long = {f"{p.relative_to(REPO)}:{node.name}": node.end_lineno - node.lineno + 1
            for p in paths for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES}
    assert long == {}
