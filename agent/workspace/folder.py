"""The agent's workspace: prompt templates and state, plain files a person can read and edit.

Every state file is written atomically (`agent/workspace/files.py`) through `PendingWrites`:
one that cannot be written (disk full) is kept in memory and written when it can be. A state
file that cannot be parsed raises `StateFileError` naming it, and is never overwritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.errors import StateFileError
from agent.workspace.bounds import history_entry
from agent.workspace.files import check_writable, overwrite_in_place, parse_json, remove_stale_temp_files
from agent.workspace.files import read_json as read_json
from agent.workspace.files import write_bytes_atomic as write_bytes_atomic
from agent.workspace.files import write_json_atomic as write_json_atomic
from agent.workspace.files import write_text_atomic as write_text_atomic
from agent.workspace.memory import Provenance, merged, with_public
from agent.workspace.memory_index import MemoryFile, MemoryIndex
from agent.workspace.pending_writes import PendingWrites

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_WORKSPACE = REPO_ROOT / "workspace"
# Templates shipped with the code; a new workspace gets a copy of each one it lacks.
TEMPLATES = ("PROMPT.md", "PROMPT_local.md", "SOUL.md", "agent_action.json", "router_actions.json")
HISTORY_PAIRS = 10


def conversation_filename(conversation: str) -> str:
    """A safe, stable file name for a conversation id such as 'console' or 'telegram:12345'."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", conversation).strip("_")[:48] or "conversation"
    if slug == conversation:
        return f"{slug}.json"
    digest = hashlib.sha256(conversation.encode()).hexdigest()[:10]
    return f"{slug}-{digest}.json"


class Workspace:
    """Paths and state of one workspace directory."""

    def __init__(self, root: Path, log_dir: Path | None = None) -> None:
        self.root = root
        self.output_dir = root / "output"
        self.history_dir = root / "history"
        self.memory_path = root / "memory.json"
        self.artifact_path = root / "artifact.json"
        self.prompt_cache_path = self.output_dir / "prompt_cache.txt"
        self.log_path = (log_dir or root) / "agent.log"
        self.pending = PendingWrites()  # state the disk refused, kept until it can be written
        self._memory_file = MemoryFile(self.memory_path, self._parse_memory)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Workspace:
        """SAFECLAW_WORKSPACE and SAFECLAW_LOG_DIR of `env` (given by the settings loader)."""
        root = Path(env["SAFECLAW_WORKSPACE"]) if env.get("SAFECLAW_WORKSPACE") else SHIPPED_WORKSPACE
        log_dir = Path(env["SAFECLAW_LOG_DIR"]) if env.get("SAFECLAW_LOG_DIR") else REPO_ROOT / "logs"
        return cls(root.resolve(), log_dir.resolve())

    def ensure(self) -> None:
        """Create the runtime folders and copy any missing template from the shipped workspace."""
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.history_dir.mkdir(parents=True, exist_ok=True)
        for name in TEMPLATES:
            target = self.root / name
            if not target.exists() and (SHIPPED_WORKSPACE / name).exists():
                shutil.copyfile(SHIPPED_WORKSPACE / name, target)

    def prepare(self) -> list[Path]:
        """At start: the folders exist and are writable (else one StateFileError line), and the temp
        files of a write killed earlier are removed (returned)."""
        try:
            self.ensure()
        except OSError as exc:
            check_writable(self.root if self.root.is_dir() else self.root.parent)
            raise StateFileError(f"cannot prepare the workspace {self.root}: {exc.strerror or exc}") from None
        for folder in (self.root, self.history_dir, self.output_dir):
            check_writable(folder)
        return remove_stale_temp_files([self.root, self.history_dir, self.output_dir])

    def state_file(self, path: Path, default: Any) -> Any:
        """A state file's content: what waits to be written to it, else what is on disk."""
        pending = self.pending.get(path)
        return read_json(path, default) if pending is None else pending

    def read_template(self, name: str) -> str:
        path = self.root / name
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StateFileError(f"{path} is missing; copy it from the shipped workspace/") from None

    def read_catalogue(self, name: str) -> list[dict[str, Any]]:
        data = read_json(self.root / name, [])
        if not isinstance(data, list) or not all(isinstance(x, dict) and "name" in x for x in data):
            raise StateFileError(f"{self.root / name} must be a JSON list of actions with a 'name'")
        return data

    # memory -----------------------------------------------------------------------------
    def _parse_memory(self, raw: bytes) -> dict[str, Any]:
        data = parse_json(self.memory_path, raw, {})
        if not isinstance(data, dict):
            raise StateFileError(f"{self.memory_path} must hold a JSON object")
        return data

    def memory_index(self) -> MemoryIndex:
        """Memory as the prompt reads it: what waits to be written, else memory.json, parsed again
        only when the file changed (`agent.workspace.memory_index`). Shared: never change it."""
        pending = self.pending.get(self.memory_path) if self.pending.has(self.memory_path) else None
        if pending is not None:
            if not isinstance(pending, dict):
                raise StateFileError(f"{self.memory_path} must hold a JSON object")
            return MemoryIndex(pending)
        return self._memory_file.load()

    def load_memory(self) -> dict[str, Any]:
        """memory.json's entries (a copy of the mapping: the caller may change it)."""
        return dict(self.memory_index().memory)

    def merge_memory(self, new_memory: Any, provenance: Provenance | str) -> list[str]:
        """Merge entries into memory.json, each stamped with when, where and by whom (a conversation
        id alone means the owner). MemoryRefused, and nothing written, when a cap would break."""
        if isinstance(provenance, str):
            provenance = Provenance(provenance)
        self.pending.write(self.memory_path, merged(self.load_memory(), new_memory, provenance))
        return sorted(str(k) for k in new_memory)

    def set_memory_public(self, key: str, public: bool) -> None:
        """Let outside turns see the owner's entry `key` (or stop them); MemoryRefused when it cannot."""
        self.pending.write(self.memory_path, with_public(self.load_memory(), key, public))

    def forget_memory(self, keys: list[str]) -> list[str]:
        """Remove these keys from memory.json; returns the ones that were there."""
        memory = self.load_memory()
        removed = sorted(key for key in set(keys) if key in memory)
        if removed:
            for key in removed:
                del memory[key]
            self.pending.write(self.memory_path, memory)
        return removed

    # history ----------------------------------------------------------------------------
    def history_path(self, conversation: str) -> Path:
        return self.history_dir / conversation_filename(conversation)

    def load_history(self, conversation: str) -> list[dict[str, Any]]:
        data = self.state_file(self.history_path(conversation), {"conversation": conversation, "turns": []})
        turns = data.get("turns") if isinstance(data, dict) else None
        if not isinstance(turns, list) or not all(isinstance(turn, dict) for turn in turns):
            raise StateFileError(f"{self.history_path(conversation)} must hold {{'turns': [{{...}}, ...]}}")
        return turns

    def _save_history(self, conversation: str, turns: list[dict[str, Any]]) -> None:
        data = {"conversation": conversation, "turns": turns[-HISTORY_PAIRS:]}
        self.pending.write(self.history_path(conversation), data)

    def begin_turn(
        self,
        conversation: str,
        user: str,
        outside_author: str | None = None,
        history: list[dict[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """Record the user's message before thinking, so a crash mid-turn loses nothing they wrote.

        `history`: the turns already read this turn (else read here). Returns the turns saved."""
        turns = list(self.load_history(conversation) if history is None else history)
        turn: dict[str, Any] = {"user": history_entry(user), "response": None, "at": time.time()}
        if outside_author:
            turn["outside_author"] = outside_author
        turns.append(turn)
        self._save_history(conversation, turns)
        return turns

    def finish_turn(
        self,
        conversation: str,
        response: str,
        turns: list[dict[str, Any]] | None = None,
        read: list[str] | None = None,
    ) -> None:
        """Set the reply of the turn `begin_turn` opened (or append one if it is gone).

        `turns`: what `begin_turn` returned (the turn runs under the loop's lock; else read here).
        `read`: the outside sources the turn read, kept with it (`agent.link.origin`)."""
        turns = list(self.load_history(conversation) if turns is None else turns)
        if turns and turns[-1].get("response") is None:
            turns[-1]["response"] = history_entry(response)
        else:
            turns.append({"user": "", "response": history_entry(response), "at": time.time()})
        if read:
            turns[-1]["read"] = list(read)
        self._save_history(conversation, turns)

    def add_notice(self, conversation: str, text: str) -> None:
        """A message of the agent's own (not an answer to a turn), kept in the conversation's history."""
        turns = self.load_history(conversation)
        turns.append({"user": "", "response": history_entry(text), "at": time.time(), "notice": True})
        self._save_history(conversation, turns)

    def clear_history(self, conversation: str | None = None) -> None:
        paths = [self.history_path(conversation)] if conversation else list(self.history_dir.glob("*.json"))
        if not conversation:
            self.pending.forget_under(self.history_dir)
        for path in paths:
            self.pending.forget(path)
            path.unlink(missing_ok=True)

    # artifact ---------------------------------------------------------------------------
    def load_artifact(self) -> dict[str, Any]:
        data = self.state_file(self.artifact_path, {})
        if not isinstance(data, dict):
            raise StateFileError(f"{self.artifact_path} must hold a JSON object")
        return data

    def save_artifact(self, artifact: dict[str, Any]) -> None:
        self.pending.write(self.artifact_path, artifact)

    def write_prompt_cache(self, prompt: str) -> None:
        """The last prompt, for a person to read; a disk that refuses it does not stop a turn, and a
        crash may lose it (a cache written each step: in place, no fsync)."""
        with contextlib.suppress(OSError):
            self.prompt_cache_path.parent.mkdir(parents=True, exist_ok=True)
            overwrite_in_place(self.prompt_cache_path, prompt)

    def clear(self) -> list[str]:
        """Remove artifact, every history and the log; nothing else. Returns what was removed."""
        removed = []
        for path in [self.artifact_path, self.log_path, *self.history_dir.glob("*.json")]:
            if path.exists():
                path.unlink()
                removed.append(
                    str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
                )
        return removed

    def output_file(self, relative: str) -> Path:
        """Resolve a path that must lie under output/ (symlinks resolved); else StateFileError."""
        candidate = Path(relative)
        if not candidate.is_absolute():
            # Accept both "output/x.txt" and "x.txt".
            base = self.root if candidate.parts[:1] == ("output",) else self.output_dir
            candidate = base / candidate
        resolved = candidate.resolve()
        if not resolved.is_relative_to(self.output_dir.resolve()):
            raise StateFileError(f"{relative} is outside the workspace output folder; refused")
        return resolved
