"""The house's arrows: no two modules import each other, however far round (function-level and
type-only imports count too), and each process imports only what it may."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "router", "protocol", "dashboard", "scripts", "evals", "bench")
# What each process may import besides itself: the agent, the router and the dashboard meet only
# through Redis and what protocol/ says of it.
MAY_IMPORT = {"agent": {"protocol"}, "router": {"protocol"}, "dashboard": {"protocol"}, "protocol": set()}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for package in PACKAGES for p in (REPO / package).rglob("*.py")}

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {t for t in map(known, targets) if t is not None and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_module_imports_itself_back():
    assert circles(import_graph()) == []


def test_a_circle_is_found_however_far_round():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_each_process_imports_only_what_it_may():
    graph = import_graph()
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.split(".")[0] in MAY_IMPORT
        for target in targets
        if target.split(".")[0] not in MAY_IMPORT[name.split(".")[0]] | {name.split(".")[0]}
    )
    assert wrong == []
