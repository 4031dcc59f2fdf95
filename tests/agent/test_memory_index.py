"""Memory read once: an unchanged memory.json is neither read nor parsed again, a change to it (by
another process too) is seen at the next turn, and the indexed prompt shows what a scan did."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from typing import Any

import pytest

from agent.errors import StateFileError
from agent.mind.prompt import render_memory
from agent.workspace import memory_index
from agent.workspace.memory import MIN_LINE_TOKENS, estimate_tokens, memory_line, source_of, terms
from agent.workspace.memory_index import MemoryIndex, MemoryView, select
from tests.agent.mind.test_loop import make_loop
from tests.agent.test_snapshot import count_reads


def fact(n: int, written: str = "2026-01-01T00:00:00Z") -> dict[str, str]:
    return {"value": f"note {n}: the blue notebook", "written_at": written, "conversation": "console",
            "author": "owner"}


def seed(workspace, memory: dict, age: float = 60.0) -> None:
    """memory.json as another process (or the owner's editor) leaves it, `age` seconds ago."""
    workspace.memory_path.write_text(json.dumps(memory))
    then = time.time() - age
    os.utime(workspace.memory_path, (then, then))


def memory_section(prompt: str) -> str:
    return prompt[prompt.index("<memory>") : prompt.index("</memory>")]


def count_parses(monkeypatch) -> list[int]:
    built: list[int] = []
    real = MemoryIndex.__init__

    def counting(self, memory):
        built.append(len(memory))
        real(self, memory)

    monkeypatch.setattr(MemoryIndex, "__init__", counting)
    return built


def test_a_turn_with_an_unchanged_memory_file_neither_reads_nor_parses_it(workspace, monkeypatch):
    seed(workspace, {"cat": fact(1) | {"value": "Miso, a grey tabby"}})
    loop, llm = make_loop(workspace, "Hi.", "Hi again.", "And again.")
    loop.run_turn("console", "what is my cat called?")  # the first turn reads it
    reads, parses = count_reads(monkeypatch, workspace.root), count_parses(monkeypatch)
    loop.run_turn("console", "and my cat?")
    loop.run_turn("console", "my cat, once more?")
    assert reads["memory.json"] == 0 and parses == [], (reads, parses)
    assert all('- cat: "Miso, a grey tabby"' in memory_section(p) for p in llm.prompts)


def test_a_file_changed_just_now_is_compared_each_turn_but_parsed_once(workspace, monkeypatch):
    seed(workspace, {"cat": fact(1)}, age=0)  # its timestamp could hide a second change
    loop, _ = make_loop(workspace, "Hi.", "Hi again.", "And again.")
    loop.run_turn("console", "hello")
    reads, parses = count_reads(monkeypatch, workspace.root), count_parses(monkeypatch)
    loop.run_turn("console", "hello again")
    assert reads["memory.json"] == 1 and parses == []
    monkeypatch.setattr(memory_index, "RACY_SECONDS", -1e9)  # now it counts as settled
    loop.run_turn("console", "hello once more")
    assert reads["memory.json"] == 1 and parses == []


WRITER = """
import json, os, sys, tempfile
path, memory = sys.argv[1], json.loads(sys.argv[2])
fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".memory.json.", suffix=".tmp")
with os.fdopen(fd, "w") as out:
    json.dump(memory, out)
    out.flush()
    os.fsync(out.fileno())
os.replace(temp, path)
"""


def test_a_change_by_another_process_is_seen_at_the_next_turn(workspace):
    seed(workspace, {"cat": fact(1) | {"value": "Miso"}})
    loop, llm = make_loop(workspace, "Hi.", "Hi again.", "And again.")
    loop.run_turn("console", "what is my cat called?")
    changed = {"cat": fact(1) | {"value": "Tom"}, "dog": fact(2) | {"value": "Rex"}}
    subprocess.run([sys.executable, "-c", WRITER, str(workspace.memory_path), json.dumps(changed)], check=True)
    loop.run_turn("console", "what are my cat and dog called?")
    section = memory_section(llm.prompts[1])
    assert '- cat: "Tom"' in section and '- dog: "Rex"' in section and "Miso" not in section
    assert workspace.load_memory()["dog"]["value"] == "Rex"


def test_an_edit_in_place_of_the_same_size_with_its_old_mtime_is_seen(workspace):
    seed(workspace, {"cat": fact(1) | {"value": "Miso"}})
    before = os.stat(workspace.memory_path)
    loop, llm = make_loop(workspace, "Hi.", "Hi again.")
    loop.run_turn("console", "what is my cat called?")
    with open(workspace.memory_path, "r+") as file:  # the same inode, the same size
        text = file.read()
        file.seek(0)
        file.write(text.replace("Miso", "Mimi"))
    os.utime(workspace.memory_path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the ctime still moves
    loop.run_turn("console", "what is my cat called?")
    assert '- cat: "Mimi"' in memory_section(llm.prompts[1])


def test_a_file_broken_by_another_process_is_refused_and_never_overwritten(workspace):
    seed(workspace, {"cat": fact(1)})
    assert "cat" in workspace.load_memory()
    workspace.memory_path.write_text("{not json")
    with pytest.raises(StateFileError, match="not valid JSON"):
        workspace.load_memory()
    with pytest.raises(StateFileError, match="not valid JSON"):
        workspace.merge_memory({"dog": "Rex"}, "console")
    assert workspace.memory_path.read_text() == "{not json"
    workspace.memory_path.unlink()
    assert workspace.load_memory() == {}


def test_load_memory_gives_a_copy_the_caller_may_change(workspace):
    seed(workspace, {"cat": fact(1), "dog": fact(2)})
    mine = workspace.load_memory()
    del mine["cat"]
    assert set(workspace.load_memory()) == {"cat", "dog"}
    assert set(workspace.memory_index().memory) == {"cat", "dog"}


def reference_select(memory: dict, context: str, budget: int) -> MemoryView:
    """The selection as it was before the index: every entry scored and sorted, then walked."""
    wanted = terms(context)

    def score(item):
        key, entry = item
        value = entry.get("value") if isinstance(entry, dict) and "value" in entry else entry
        key_terms, value_terms = terms(key.replace("_", " ")), terms(json.dumps(value, ensure_ascii=False))
        written = entry.get("written_at", "") if isinstance(entry, dict) else ""
        return 2 * len(key_terms & wanted) + len(value_terms & wanted), str(written)

    view, used = MemoryView([], [], 0), 0
    for key, entry in sorted(memory.items(), key=score, reverse=True):
        if used >= budget - MIN_LINE_TOKENS:
            view.left_out += 1
            continue
        line, source = memory_line(key, entry), source_of(entry)
        cost = estimate_tokens(line) + (estimate_tokens(source) + 4 if source else 0)
        if used + cost > budget:
            view.left_out += 1
            continue
        used += cost
        (view.owner.append(line) if source is None else view.outside.append((line, source)))
    return view


WORDS = ["tea", "notebook", "blue", "dentist", "friday", "cat", "dog", "garden", "sam", "train", "paris", "bank",
         "pin", "door", "code"]


def random_memory(rng: random.Random, size: int) -> dict[str, Any]:
    memory: dict[str, Any] = {}
    for n in range(size):
        key = "_".join(rng.sample(WORDS, rng.randint(1, 2))) + f"_{n}"
        value = " ".join(rng.choices(WORDS, k=rng.randint(1, 40)))
        shape = rng.random()
        if shape < 0.1:
            memory[key] = value  # typed by hand: no provenance
        elif shape < 0.2:
            memory[key] = {"value": value, "author": "did:plc:someone", "conversation": "bluesky:x"}
        else:
            day = rng.randint(1, 5)  # equal times are common: the file's order breaks the tie
            memory[key] = {"value": value, "written_at": f"2026-01-0{day}T00:00:00Z", "author": "owner",
                           "conversation": "console", **({"public": True} if shape > 0.9 else {})}
    return memory


@pytest.mark.parametrize("seed_value", range(12))
def test_the_index_shows_what_scoring_every_entry_showed(seed_value):
    rng = random.Random(seed_value)
    memory = random_memory(rng, rng.choice([0, 1, 5, 40, 300]))
    index = MemoryIndex(memory)
    for _ in range(8):
        context = " ".join(rng.choices(WORDS + ["what", "about", "unrelated"], k=rng.randint(0, 6)))
        budget = rng.choice([7, 20, 60, 200, 2000])
        assert select(index, context, budget) == reference_select(memory, context, budget)
        assert render_memory(index, context, budget) == render_memory(memory, context, budget)


def test_the_prompt_stops_looking_once_the_budget_is_full():
    memory = {f"fact_{n}": fact(n) for n in range(10_000)}
    index = MemoryIndex(memory)
    looked = []
    real = index.ranked

    def counting(context, room):
        for item in real(context, room):
            looked.append(item)
            yield item

    index.ranked = counting  # type: ignore[method-assign]
    view = select(index, "what about note 77?", 200)
    assert view.owner and view.left_out == 10_000 - len(view.owner)
    assert len(looked) <= len(view.owner) + 2
