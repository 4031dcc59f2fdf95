import json
import os

import pytest

from agent.errors import StateFileError
from agent.workspace.folder import HISTORY_PAIRS, conversation_filename, write_json_atomic


def test_memory_merge_records_when_and_where(workspace):
    workspace.merge_memory({"cat": "Miso"}, "console")
    workspace.merge_memory({"dog": "Rex", "cat": "Tofu"}, "telegram:42")
    memory = json.loads(workspace.memory_path.read_text())
    assert memory["cat"]["value"] == "Tofu"
    assert memory["cat"]["conversation"] == "telegram:42"
    assert memory["dog"]["conversation"] == "telegram:42"
    assert memory["cat"]["written_at"].endswith("Z")


def test_corrupt_state_file_is_named_and_never_overwritten(workspace):
    workspace.memory_path.write_text("{not json")
    with pytest.raises(StateFileError, match="memory.json"):
        workspace.merge_memory({"a": 1}, "console")
    assert workspace.memory_path.read_text() == "{not json"


def test_history_keeps_last_pairs_per_conversation(workspace):
    for i in range(HISTORY_PAIRS + 3):
        workspace.begin_turn("console", f"q{i}")
        workspace.finish_turn("console", f"a{i}")
    workspace.begin_turn("telegram:1", "other")
    turns = workspace.load_history("console")
    assert len(turns) == HISTORY_PAIRS
    assert turns[-1] == {**turns[-1], "user": f"q{HISTORY_PAIRS + 2}", "response": f"a{HISTORY_PAIRS + 2}"}
    assert [t["user"] for t in workspace.load_history("telegram:1")] == ["other"]


def test_interrupted_turn_keeps_the_user_message(workspace):
    workspace.begin_turn("console", "please remember this")
    # the process dies here; on restart the message is still there
    assert workspace.load_history("console")[-1]["user"] == "please remember this"
    assert workspace.load_history("console")[-1]["response"] is None


def test_conversation_file_names_are_safe_and_distinct():
    names = {
        conversation_filename(c) for c in ["console", "telegram:1", "telegram_1", "../../etc/passwd", "a/b"]
    }
    assert len(names) == 5
    assert all("/" not in n and not n.startswith(".") for n in names)


def test_atomic_write_leaves_old_file_when_serialisation_fails(tmp_path):
    tmp_path = tmp_path / "state"
    path = tmp_path / "state.json"
    write_json_atomic(path, {"ok": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"bad": object()})
    assert json.loads(path.read_text()) == {"ok": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_atomic_write_replaces_by_rename(tmp_path, monkeypatch):
    tmp_path = tmp_path / "state"
    path = tmp_path / "state.json"
    calls = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append((a, b)), real_replace(a, b)))
    write_json_atomic(path, [1])
    assert calls and calls[0][1] == path


def test_output_file_refuses_paths_outside_output(workspace):
    (workspace.output_dir / "page.txt").write_text("x")
    assert workspace.output_file("output/page.txt").name == "page.txt"
    assert workspace.output_file("page.txt").name == "page.txt"
    for bad in ["../memory.json", "output/../SOUL.md", "/etc/passwd"]:
        with pytest.raises(StateFileError, match="outside"):
            workspace.output_file(bad)
    (workspace.output_dir / "link.txt").symlink_to(workspace.root / "SOUL.md")
    with pytest.raises(StateFileError):
        workspace.output_file("link.txt")


def test_clear_removes_artifact_history_log_only(workspace):
    workspace.merge_memory({"keep": 1}, "console")
    workspace.save_artifact({"x": 1})
    workspace.begin_turn("console", "hi")
    workspace.log_path.parent.mkdir(parents=True, exist_ok=True)
    workspace.log_path.write_text("log")
    (workspace.output_dir / "keep.txt").write_text("x")
    removed = workspace.clear()
    assert sorted(removed) == sorted(["artifact.json", str(workspace.log_path), "history/console.json"])
    assert not workspace.log_path.exists()
    assert workspace.memory_path.exists() and (workspace.output_dir / "keep.txt").exists()
    assert (workspace.root / "SOUL.md").exists()


def test_lone_surrogates_do_not_crash_a_state_write(workspace):
    # JSON from a model may carry half an emoji ("\ud83d"); stdin may carry surrogate escapes.
    workspace.begin_turn("console", "caf\udce9 ok")
    workspace.merge_memory({"mood": "\ud83d happy"}, "console")
    assert workspace.load_history("console")[-1]["user"] == "caf? ok"
    assert workspace.load_memory()["mood"]["value"] == "? happy"


def test_state_file_that_is_not_utf8_is_named_and_never_overwritten(workspace):
    workspace.memory_path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(StateFileError, match="memory.json"):
        workspace.merge_memory({"a": 1}, "console")
    assert workspace.memory_path.read_bytes() == b'{"a": "\xff"}'


@pytest.mark.parametrize("turns", [["a string"], [None], [{"user": "hi"}, 3]])
def test_history_with_turns_that_are_not_objects_is_a_state_file_error(workspace, turns):
    path = workspace.history_path("console")
    path.write_text(json.dumps({"turns": turns}))
    with pytest.raises(StateFileError, match=path.name):
        workspace.load_history("console")
