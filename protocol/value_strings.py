"""A JSON-like value's strings in order (keys included), and the same value rebuilt around new
strings (tuples as lists, keys as strings)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def collect_strings(node: Any, strings: list[str]) -> None:
    if isinstance(node, str):
        strings.append(node)
    elif isinstance(node, dict):
        for key, item in node.items():
            strings.append(key if isinstance(key, str) else str(key))
            collect_strings(item, strings)
    elif isinstance(node, list | tuple):
        for item in node:
            collect_strings(item, strings)


def rebuild(node: Any, strings: Iterable[str]) -> Any:
    it = iter(strings)

    def build(node: Any) -> Any:
        if isinstance(node, str):
            return next(it)
        if isinstance(node, dict):
            return {next(it): build(item) for item in node.values()}
        if isinstance(node, list | tuple):
            return [build(item) for item in node]
        return node

    return build(node)
