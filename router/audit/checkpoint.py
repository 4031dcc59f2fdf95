"""The audit chain's head, checkpointed beside it and sealed with a key the log's folder does not hold.

The hash chain alone shows an edited, inserted, reordered or deleted line, but not lines cut from
the end of the newest file, and anyone who can write the files can rewrite the chain from any line
on (the hashes are unkeyed). So after each group commit (`AuditLog.sync`) the router writes
`<name>.head`: the last seq and hash it made durable, with an HMAC-SHA256 under the router's audit
key (`ROUTER_AUDIT_KEY_FILE`, by default `audit.key` in the router's data folder, 0600, made at the
first start). Without that key a checkpoint cannot be forged: a log cut short of it, or rewritten
under it, fails `audit verify`. Whoever can read the key (the router's own user, root) can rewrite
both; only a copy elsewhere (the Redis audit stream, shipped logs) shows that.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from protocol.atomic_file import write_atomically

SUFFIX = ".head"
KEY_BYTES = 32


class AuditKeyError(Exception):
    """The audit key file cannot be read or made; the message says which file and why."""


def load_key(path: Path, create: bool = False) -> bytes:
    """The key in `path` (hex); with `create`, a new random one written 0600 when there is none."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if not create:
            raise AuditKeyError(f"no audit key at {path}") from None
        return _create_key(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise AuditKeyError(f"audit key {path}: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise AuditKeyError(f"audit key {path} is not hex; remove it to have a new one made") from None
    if len(key) < 16:
        raise AuditKeyError(f"audit key {path} is too short (at least 16 bytes)")
    return key


def _create_key(path: Path) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another router made it first
        return load_key(path)
    except OSError as exc:
        raise AuditKeyError(f"cannot make the audit key {path}: {exc}") from None
    try:
        os.write(fd, key.hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def seal(key: bytes, name: str, seq: int, digest: str) -> str:
    return hmac.new(key, f"{name}\n{seq}\n{digest}".encode(), hashlib.sha256).hexdigest()


def path_of(directory: Path, name: str) -> Path:
    return directory / f"{name}{SUFFIX}"


def write(directory: Path, name: str, seq: int, digest: str, key: bytes) -> None:
    """Replace the checkpoint atomically and durably (temp file, fsync, rename, fsync the folder)."""
    body = {"name": name, "seq": seq, "hash": digest, "mac": seal(key, name, seq, digest)}
    write_atomically(path_of(directory, name), _encoded(body), sync_folder=True)


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    digest: str
    mac: str


def read(directory: Path, name: str) -> Checkpoint | None:
    """The checkpoint, None when there is none; raises ValueError when it is not one, byte for
    byte as `write` makes it (another name in it, CRLF, a space: the MAC covers only seq and hash,
    so any other edit is caught here)."""
    path = path_of(directory, name)
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON, past the digit limit
        raise ValueError(f"{path.name} is unreadable ({type(exc).__name__})") from None
    try:
        checkpoint = Checkpoint(int(data["seq"]), str(data["hash"]), str(data["mac"]))
        as_written = {"name": name, "seq": checkpoint.seq, "hash": checkpoint.digest, "mac": checkpoint.mac}
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path.name} is not a checkpoint") from None
    if raw != _encoded(as_written):
        raise ValueError(f"{path.name} is not byte for byte the checkpoint the router wrote")
    return checkpoint


def _encoded(body: dict[str, object]) -> bytes:
    return (json.dumps(body, sort_keys=True) + "\n").encode()


def genuine(checkpoint: Checkpoint, key: bytes, name: str) -> bool:
    return hmac.compare_digest(seal(key, name, checkpoint.seq, checkpoint.digest), checkpoint.mac)


# -- the sealed list of the folder's chains ------------------------------------------------------
# A chain's checkpoint shows lines cut from its end, but a chain deleted whole (its files and its
# `.head`) leaves nothing behind. So the folder also holds `chains.sealed`: every chain name a
# router or the one-shot tool ever wrote there, with an HMAC under the audit key. Each writer adds
# its name at start; `audit verify` fails when a listed chain has no files.
CHAINS_FILE = "chains.sealed"


def seal_chains(key: bytes, names: list[str]) -> str:
    return hmac.new(key, ("chains\n" + "\n".join(sorted(names))).encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class ChainList:
    names: list[str]
    mac: str

    def genuine(self, key: bytes) -> bool:
        return hmac.compare_digest(seal_chains(key, self.names), self.mac)


def read_chains(directory: Path) -> ChainList | None:
    """The sealed list, None when there is none; raises ValueError when it is not one."""
    path = directory / CHAINS_FILE
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
        found = ChainList([str(n) for n in data["chains"]], str(data["mac"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        kind = type(exc).__name__
        raise ValueError(f"{CHAINS_FILE} is unreadable or not a list of chains ({kind})") from None
    if raw != _encoded({"chains": found.names, "mac": found.mac}):
        raise ValueError(f"{CHAINS_FILE} is not byte for byte the list the routers wrote")
    return found


def enrol(directory: Path, name: str, key: bytes, sealed_heads: list[str]) -> str | None:
    """Add `name` to the sealed list (under a lock shared by every writer of the folder). When the
    list is new, the chains whose checkpoint seals (`sealed_heads`) are listed too. Returns the
    problem found with the list as it was (unreadable, or not sealing under the key), else None."""
    fd = os.open(directory / "chains.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        problem = None
        try:
            found = read_chains(directory)
        except ValueError as exc:
            found, problem = None, str(exc)
        if found is not None and not found.genuine(key):
            problem = f"{CHAINS_FILE} does not seal under the audit key"
        names = set(found.names if found is not None else sealed_heads)
        if name in names and problem is None:
            return None
        names.add(name)
        listed = sorted(names)
        body = _encoded({"chains": listed, "mac": seal_chains(key, listed)})
        write_atomically(directory / CHAINS_FILE, body, sync_folder=True)
        return problem
    finally:
        os.close(fd)
