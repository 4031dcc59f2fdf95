"""One atomic write for every process: the old content or the new one, the mode asked, no temp left."""

import os
import stat

import pytest

from protocol.atomic_file import write_atomically


def test_the_new_content_replaces_the_old_with_the_mode_asked(tmp_path):
    target = tmp_path / "deep" / "state.json"
    write_atomically(target, b"old")
    write_atomically(target, b"new", durable=False, mode=0o644, sync_folder=True)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_private_by_default(tmp_path):
    target = tmp_path / "secret.env"
    write_atomically(target, b"TOKEN=x\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "folder" / "state.json"
    write_atomically(target, b"old")

    def refused(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(OSError):
        write_atomically(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]
