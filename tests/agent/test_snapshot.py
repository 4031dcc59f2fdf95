"""One turn, one read: a two-step turn reads each workspace file once and builds both prompts from it."""

from __future__ import annotations

import builtins
import collections
import io
import pathlib

from tests.agent.mind.test_loop import make_loop, tool


def count_reads(monkeypatch, root: pathlib.Path) -> collections.Counter[str]:
    """Count every open-for-reading of a file under `root` (Path.read_text and friends go through
    io.open, as builtin open is), by path relative to it."""
    reads: collections.Counter[str] = collections.Counter()
    real_open = io.open
    base = root.resolve()

    def counting_open(file, mode="r", *args, **kwargs):
        if isinstance(file, str | pathlib.Path) and "r" in mode and "+" not in mode:
            resolved = pathlib.Path(file).resolve()
            if resolved.is_relative_to(base):
                reads[str(resolved.relative_to(base))] += 1
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    return reads


def test_a_two_step_turn_reads_each_workspace_file_once(workspace, monkeypatch):
    loop, llm = make_loop(workspace, "warm-up answer")
    loop.run_turn("console", "hello")  # history, memory and artifact now exist
    loop.llm.enqueue(tool(("PING", {})), "Pinged; all fine.")
    workspace.merge_memory({"cat": "Miso"}, "console")

    reads = count_reads(monkeypatch, workspace.root)
    result = loop.run_turn("console", "ping the router please")

    assert result.reply == "Pinged; all fine." and len(llm.prompts) == 3
    assert "Miso" in llm.prompts[1] and "Miso" in llm.prompts[2]  # both steps built from the snapshot
    assert "hello" in llm.prompts[2] and "PING" in llm.prompts[2]
    assert reads == {
        "PROMPT.md": 1,
        "SOUL.md": 1,
        "memory.json": 1,
        "agent_action.json": 1,
        "router_actions.json": 1,
        "history/console.json": 1,
        "artifact.json": 1,
    }, reads


def test_a_memory_write_is_seen_by_the_next_step(workspace):
    loop, llm = make_loop(workspace, tool(("_MEMORY_WRITE", {"new_memory": {"dog": "Rex"}})), "Noted.")
    loop.run_turn("console", "my dog is Rex")
    assert "Rex" not in llm.prompts[0].split("<memory>")[-1].split("</memory>")[0]
    assert "dog" in llm.prompts[1] and "Rex" in llm.prompts[1]
