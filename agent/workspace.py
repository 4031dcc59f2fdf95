"""The agent's workspace: prompt templates and state, plain files a person can read and edit.

Every state file is written atomically (temp file, fsync, rename). A state file that cannot
be parsed raises `StateFileError` naming it, and is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.errors import StateFileError
from agent.memory import Provenance, merged

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_WORKSPACE = REPO_ROOT / "workspace"
# Templates shipped with the code; a new workspace gets a copy of each one it lacks.
TEMPLATES = ("PROMPT.md", "PROMPT_local.md", "SOUL.md", "agent_action.json", "router_actions.json")
HISTORY_PAIRS = 10


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never a torn one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    # A lone surrogate (half an emoji in a model's JSON, a surrogate escape from stdin) cannot be
    # UTF-8: it becomes "?" rather than failing the write and the turn with it.
    write_bytes_atomic(path, text.encode("utf-8", errors="replace"))


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def read_json(path: Path, default: Any) -> Any:
    """The parsed file, or `default` when it does not exist. Corrupt → StateFileError."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise StateFileError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise StateFileError(
            f"{path} is not UTF-8 text (byte {exc.start}). "
            "Fix it by hand or move it away; SafeClaw will not overwrite it."
        ) from None
    if not raw.strip():
        return default
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise StateFileError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            "Fix it by hand or move it away; SafeClaw will not overwrite it."
        ) from None


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
    def load_memory(self) -> dict[str, Any]:
        data = read_json(self.memory_path, {})
        if not isinstance(data, dict):
            raise StateFileError(f"{self.memory_path} must hold a JSON object")
        return data

    def merge_memory(self, new_memory: Any, provenance: Provenance | str) -> list[str]:
        """Merge entries into memory.json, each stamped with when, where and by whom (a conversation
        id alone means the owner). MemoryRefused, and nothing written, when a cap would break."""
        if isinstance(provenance, str):
            provenance = Provenance(provenance)
        write_json_atomic(self.memory_path, merged(self.load_memory(), new_memory, provenance))
        return sorted(str(k) for k in new_memory)

    def forget_memory(self, keys: list[str]) -> list[str]:
        """Remove these keys from memory.json; returns the ones that were there."""
        memory = self.load_memory()
        removed = sorted(key for key in set(keys) if key in memory)
        if removed:
            for key in removed:
                del memory[key]
            write_json_atomic(self.memory_path, memory)
        return removed

    # history ----------------------------------------------------------------------------
    def history_path(self, conversation: str) -> Path:
        return self.history_dir / conversation_filename(conversation)

    def load_history(self, conversation: str) -> list[dict[str, Any]]:
        data = read_json(self.history_path(conversation), {"conversation": conversation, "turns": []})
        turns = data.get("turns") if isinstance(data, dict) else None
        if not isinstance(turns, list) or not all(isinstance(turn, dict) for turn in turns):
            raise StateFileError(f"{self.history_path(conversation)} must hold {{'turns': [{{...}}, ...]}}")
        return turns

    def _save_history(self, conversation: str, turns: list[dict[str, Any]]) -> None:
        data = {"conversation": conversation, "turns": turns[-HISTORY_PAIRS:]}
        write_json_atomic(self.history_path(conversation), data)

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
        turn: dict[str, Any] = {"user": user, "response": None, "at": time.time()}
        if outside_author:
            turn["outside_author"] = outside_author
        turns.append(turn)
        self._save_history(conversation, turns)
        return turns

    def finish_turn(
        self, conversation: str, response: str, turns: list[dict[str, Any]] | None = None
    ) -> None:
        """Set the reply of the turn `begin_turn` opened (or append one if it is gone).

        `turns`: what `begin_turn` returned (the turn runs under the loop's lock; else read here)."""
        turns = list(self.load_history(conversation) if turns is None else turns)
        if turns and turns[-1].get("response") is None:
            turns[-1]["response"] = response
        else:
            turns.append({"user": "", "response": response, "at": time.time()})
        self._save_history(conversation, turns)

    def clear_history(self, conversation: str | None = None) -> None:
        paths = [self.history_path(conversation)] if conversation else list(self.history_dir.glob("*.json"))
        for path in paths:
            path.unlink(missing_ok=True)

    # artifact ---------------------------------------------------------------------------
    def load_artifact(self) -> dict[str, Any]:
        data = read_json(self.artifact_path, {})
        if not isinstance(data, dict):
            raise StateFileError(f"{self.artifact_path} must hold a JSON object")
        return data

    def save_artifact(self, artifact: dict[str, Any]) -> None:
        write_json_atomic(self.artifact_path, artifact)

    def write_prompt_cache(self, prompt: str) -> None:
        write_text_atomic(self.prompt_cache_path, prompt)

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
