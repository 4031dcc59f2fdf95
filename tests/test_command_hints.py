"""A command the product tells a person to run works as written on a fresh machine. A bare
`python agent/start_agent.py` or `python -m router.x` fails there with ModuleNotFoundError (the
packages live in the venv, issue 21 item 9); the dashboard still said "start it with ./safeclaw (or
python agent/start_agent.py)". Every string in the product's code (docstrings aside: they speak to
developers) that shows such a command shows it through `./safeclaw`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("agent", "router", "dashboard", "protocol", "scripts")
BARE_PYTHON = re.compile(r"(?<!safeclaw )(?<![\w/.])python3? (?:-m [\w.]+|[\w/]+\.py)")


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def bare_commands(source: str) -> list[str]:
    tree = ast.parse(source)
    skip = docstrings(tree)
    return [f"line {node.lineno}: {match.group(0)!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            for match in BARE_PYTHON.finditer(node.value)]


def test_the_check_sees_a_bare_command_and_lets_the_safeclaw_form_pass():
    assert bare_commands('HINT = "start it with python agent/start_agent.py"\n')
    assert bare_commands("print('usage: python -m router.audit verify')\n")
    assert not bare_commands('HINT = "run ./safeclaw python -m router.catalogue"\n')
    assert not bare_commands('"""Run `python agent/start_agent.py --help`."""\n')


def test_no_string_shown_to_a_person_names_a_bare_python_command():
    found = {}
    for package in PRODUCT:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            hits = bare_commands(path.read_text(encoding="utf-8"))
            if hits:
                found[str(path.relative_to(REPO_ROOT))] = hits
    assert found == {}, found
