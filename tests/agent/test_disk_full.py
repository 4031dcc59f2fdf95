"""A full or read-only disk: an honest reply, nothing lost, one clear line at start.

The real-disk tests mount a tmpfs of 512 KB and fill it (they need root to mount; they skip with
the reason otherwise); the same flow also runs with ENOSPC injected at the write layer only."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import time

import pytest

from agent.app import build_loop
from agent.channels.base import IncomingMessage
from agent.config.settings import load_settings
from agent.link.router_client import NoRouter
from agent.llm.scripted.llm import ScriptedLLM
from agent.service import AgentService
from agent.workspace import pending_writes
from agent.workspace.files import STALE_TEMP_SECONDS
from agent.workspace.folder import SHIPPED_WORKSPACE, TEMPLATES
from tests.agent.test_start_agent import run_agent
from tests.support.small_disk import mount_tmpfs, small_disk, unmount


def service_on(workspace_root, tmp_path, llm):
    workspace_root.mkdir(parents=True, exist_ok=True)
    for name in TEMPLATES:
        shutil.copyfile(SHIPPED_WORKSPACE / name, workspace_root / name)
    settings = load_settings({"SAFECLAW_WORKSPACE": str(workspace_root),
                              "SAFECLAW_CONFIG": str(tmp_path / "config.json"),
                              "SAFECLAW_LOG_DIR": str(tmp_path / "logs")})
    return AgentService(settings, build_loop(settings, llm=llm, router=NoRouter()))


def disk_full_switch(monkeypatch, on, only=lambda path: True):
    """State writes fail with ENOSPC while `switch["on"]` (for the paths `only` picks): a disk that
    fills and empties at the write layer."""
    switch = {"on": on}
    real_write = pending_writes.write_json_atomic

    def write(path, data, durable=True):
        if switch["on"] and only(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real_write(path, data, durable)

    monkeypatch.setattr(pending_writes, "write_json_atomic", write)
    return switch


def say(service, text):
    return asyncio.run(service.handle(IncomingMessage("console", "console", "owner", text)))


def saved_turns(service):
    path = service.loop.workspace.history_path("console")
    return [(t["user"], t["response"]) for t in json.loads(path.read_text())["turns"]]


def check_full_disk_flow(service, llm, fill, free):
    assert say(service, "hello") == "Hi."
    fill()
    history = service.loop.workspace.history_path("console")
    for text in ("first while full", "second while full"):
        reply = say(service, text)
        assert reply.startswith("Your message was NOT saved: the disk is full"), reply
        assert str(history) in reply and "keep it in memory" in reply
        assert "is saved" not in reply
    assert len(llm.prompts) == 1  # nothing was done on a message that is not recorded
    assert saved_turns(service) == [("hello", "Hi.")]  # the disk holds the old, whole file

    free()
    assert service.loop.flush_pending() == [history]
    assert saved_turns(service) == [("hello", "Hi."), ("first while full", None), ("second while full", None)]
    assert say(service, "and now?") == "Room again."
    assert saved_turns(service)[-1] == ("and now?", "Room again.")
    leftovers = [p.name for p in history.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_really_full_disk_is_told_honestly_and_nothing_is_lost(tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        if isinstance(disk, str):
            pytest.skip(disk)
        llm = ScriptedLLM(["Hi.", "Room again."])
        service = service_on(disk.root / "workspace", tmp_path, llm)
        check_full_disk_flow(service, llm, disk.fill, disk.free)


def test_enospc_at_the_write_layer_is_told_honestly_and_nothing_is_lost(tmp_path, monkeypatch):
    full = disk_full_switch(monkeypatch, on=False)
    llm = ScriptedLLM(["Hi.", "Room again."])
    service = service_on(tmp_path / "workspace", tmp_path, llm)
    check_full_disk_flow(service, llm, lambda: full.update(on=True), lambda: full.update(on=False))


def test_the_service_writes_what_was_kept_as_soon_as_there_is_room(tmp_path, monkeypatch):
    full = disk_full_switch(monkeypatch, on=True)
    monkeypatch.setattr("agent.service.FLUSH_EVERY", 0.05)
    service = service_on(tmp_path / "workspace", tmp_path, ScriptedLLM([]))
    assert "NOT saved" in say(service, "keep me")
    history = service.loop.workspace.history_path("console")

    async def run_until_written():
        task = asyncio.create_task(service._flush_pending_writes())
        full["on"] = False
        for _ in range(100):
            if history.exists():
                break
            await asyncio.sleep(0.02)
        task.cancel()

    asyncio.run(run_until_written())
    assert saved_turns(service) == [("keep me", None)]


def test_stale_temp_files_of_a_killed_write_are_removed_at_start(workspace):
    workspace.ensure()
    old = workspace.history_dir / ".console.json.k1ll3d.tmp"
    old.write_text('{"turns": [')
    past = time.time() - STALE_TEMP_SECONDS - 5
    os.utime(old, (past, past))
    fresh = workspace.root / ".memory.json.inflight.tmp"  # another process may be writing it now
    fresh.write_text("{")
    removed = workspace.prepare()
    assert removed == [old] and not old.exists() and fresh.exists()


def read_only_workspace(tmp_path, monkeypatch):
    """A workspace folder that refuses writes: a read-only tmpfs as root, else a 0555 folder."""
    folder = tmp_path / "ro-workspace"
    if os.geteuid() == 0:
        problem = mount_tmpfs(folder, "64k", read_only=True)
        if problem:
            pytest.skip(problem)
        return folder, lambda: unmount(folder)
    folder.mkdir()
    folder.chmod(0o555)
    return folder, lambda: folder.chmod(0o755)


def test_a_read_only_workspace_is_one_clear_line_at_start(tmp_path, monkeypatch):
    folder, undo = read_only_workspace(tmp_path, monkeypatch)
    try:
        done = run_agent(stdin="hi\n", env={"SAFECLAW_WORKSPACE": str(folder),
                                            "SAFECLAW_LLM_PROVIDER": "scripted"})
    finally:
        undo()
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"safeclaw: the workspace folder {folder}") and "not writable" in lines[0]
    assert done.stdout == ""


def test_a_memory_write_on_a_full_disk_says_it_is_kept_and_not_on_disk_yet(tmp_path, monkeypatch):
    # the disk fills between the message and the memory write
    full = disk_full_switch(monkeypatch, on=True, only=lambda path: path.name == "memory.json")
    remember = '<tool_code>[{"name": "_MEMORY_WRITE", "params": {"new_memory": {"cat": "Miso"}}}]</tool_code>'
    llm = ScriptedLLM([remember, "Noted.", "Your cat is Miso."])
    service = service_on(tmp_path / "workspace", tmp_path, llm)
    say(service, "my cat is Miso")
    observation = llm.prompts[1].split("<artifact>\n")[1].split("</artifact>")[0]
    assert '"status": "ok"' in observation and "not on disk yet" in observation and "disk is full" in observation
    assert "Miso" in llm.prompts[1].split("<memory>\n")[1].split("</memory>")[0]  # the next step sees it: it is remembered
    reply = asyncio.run(service.handle(IncomingMessage("console", "console", "owner", "/remember dog = Rex")))
    assert "dog" in reply and "not on disk yet" in reply
    full["on"] = False
    service.loop.flush_pending()
    on_disk = json.loads((tmp_path / "workspace" / "memory.json").read_text())
    assert on_disk["cat"]["value"] == "Miso" and on_disk["dog"]["value"] == "Rex"


def test_a_command_whose_reply_cannot_be_saved_says_what_it_did_and_that_it_is_kept(tmp_path, monkeypatch):
    real_write = pending_writes.write_json_atomic
    history = {"path": None}

    def write(path, data, durable=True):  # the disk fills between the command's message and its reply
        turns = data.get("turns") if isinstance(data, dict) else None
        if path == history["path"] and turns and turns[-1].get("response") is not None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real_write(path, data, durable)

    monkeypatch.setattr(pending_writes, "write_json_atomic", write)
    service = service_on(tmp_path / "workspace", tmp_path, ScriptedLLM([]))
    history["path"] = service.loop.workspace.history_path("console")
    reply = say(service, "/remember dog = Rex")
    assert "something is wrong" not in reply
    assert "dog" in reply and "This exchange is not saved yet" in reply and "disk is full" in reply
    assert json.loads((tmp_path / "workspace" / "memory.json").read_text())["dog"]["value"] == "Rex"


def test_what_waits_for_the_disk_is_a_copy_and_the_newest_write_wins(tmp_path, monkeypatch):
    from agent.errors import NotSavedError

    full = disk_full_switch(monkeypatch, on=True)
    waiting, path = pending_writes.PendingWrites(), tmp_path / "state.json"
    data = {"turns": ["one"]}
    with pytest.raises(NotSavedError):
        waiting.write(path, data)
    data["turns"].append("changed after the write")  # the caller's own object, not what waits
    assert waiting.get(path) == {"turns": ["one"]}
    full["on"] = False
    waiting.write(path, {"turns": ["two"]})  # written: the older content waits no more
    assert not waiting.has(path) and waiting.flush() == []
    assert json.loads(path.read_text()) == {"turns": ["two"]}
