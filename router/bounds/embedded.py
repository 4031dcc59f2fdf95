"""The bounds' counters on disk, for a router that has no Redis (the one-shot tool without REDIS_URL).

`EmbeddedStore` answers the few Redis commands the bounds use (`embedded_commands.Commands`:
strings: GET, SET [GET] [EX], GETDEL, DEL, EXISTS, INCR, DECR, EXPIRE, TTL; sorted sets: ZADD,
ZREM, ZRANGE and ZRANGEBYSCORE [WITHSCORES], ZCARD, ZREMRANGEBYSCORE; lists: LPUSH, LTRIM,
LRANGE) with Redis's semantics, from one SQLite file in WAL mode. So quotas,
pacing, the duplicate guard and the circuit breaker run the very code they run on Redis; only
where the counters live differs.

Several processes may share the file: every command, and every pipeline as a whole, is one
`BEGIN IMMEDIATE` transaction (writers queue for the lock, `busy_timeout` long; a reader never
sees half a pipeline), and keys expire as Redis's do: a key with a TTL is gone once its time
has passed, whatever the caller's clock says. Values come back as text (as with
`decode_responses=True`); scores as floats.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from router.bounds.embedded_commands import (
    Command,
    Commands,
    EmbeddedPipeline,
    StoreError,
    index_range,
    score_bound,
    stored_text,
)

FILE_NAME = "bounds.sqlite3"
BUSY_TIMEOUT_SECONDS = 30.0
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS strings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS zsets (key TEXT NOT NULL, member TEXT NOT NULL, score REAL NOT NULL, "
    "PRIMARY KEY (key, member))",
    "CREATE TABLE IF NOT EXISTS lists (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, "
    "value TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS lists_by_key ON lists (key, id)",
    "CREATE TABLE IF NOT EXISTS expiry (key TEXT PRIMARY KEY, at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS expiry_by_time ON expiry (at)",
)
_TABLES = ("strings", "zsets", "lists")


class EmbeddedStore(Commands):
    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock  # for TTLs only, as Redis's own clock
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # created private, never world-readable
            os.close(fd)
            self._db = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
            )
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: SQLite could not switch to WAL mode (it is {mode})")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._transaction() as db:
                for statement in _SCHEMA:
                    db.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"the bounds' store {path} cannot be opened: {exc}") from None

    @classmethod
    def in_folder(cls, data_dir: Path) -> EmbeddedStore:
        return cls(data_dir / FILE_NAME)

    def close(self) -> None:
        self._db.close()

    def pipeline(self, transaction: bool = True) -> EmbeddedPipeline:
        """Commands queued and run by `execute()` as one transaction (whatever `transaction` says)."""
        return EmbeddedPipeline(self)

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self.run([(name, args, kwargs)])[0]

    def run(self, commands: list[Command]) -> list[Any]:
        try:
            with self._transaction() as db:
                now = self.clock()
                self._expire_due(db, now)
                return [getattr(self, f"_{name}")(db, now, *args, **kwargs)
                        for name, args, kwargs in commands]
        except sqlite3.Error as exc:
            raise StoreError(f"the bounds' store {self.path}: {exc}") from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")  # the write lock now: no upgrade deadlock between readers
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- keys ----------------------------------------------------------------------------------
    @staticmethod
    def _expire_due(db: sqlite3.Connection, now: float) -> None:
        due = [row[0] for row in db.execute("SELECT key FROM expiry WHERE at <= ?", (now,))]
        for key in due:
            EmbeddedStore._drop(db, key)

    @staticmethod
    def _drop(db: sqlite3.Connection, key: str) -> int:
        found = 0
        for table in _TABLES:
            found |= db.execute(f"DELETE FROM {table} WHERE key = ?", (key,)).rowcount > 0
        db.execute("DELETE FROM expiry WHERE key = ?", (key,))
        return found

    @staticmethod
    def _type_of(db: sqlite3.Connection, key: str) -> str | None:
        for table in _TABLES:
            if db.execute(f"SELECT 1 FROM {table} WHERE key = ? LIMIT 1", (key,)).fetchone():
                return table
        return None

    def _require(self, db: sqlite3.Connection, key: str, table: str) -> bool:
        """True when the key holds this type; False when it is absent (its old TTL is dropped)."""
        found = self._type_of(db, key)
        if found is None:
            db.execute("DELETE FROM expiry WHERE key = ?", (key,))  # a key made anew has no TTL
            return False
        if found != table:
            raise StoreError("WRONGTYPE Operation against a key holding the wrong kind of value")
        return True

    def _delete(self, db: sqlite3.Connection, now: float, *keys: str) -> int:
        return sum(self._drop(db, stored_text(key)) for key in keys)

    def _exists(self, db: sqlite3.Connection, now: float, *keys: str) -> int:
        return sum(self._type_of(db, stored_text(key)) is not None for key in keys)

    def _expire(self, db: sqlite3.Connection, now: float, key: str, seconds: int) -> bool:
        if self._type_of(db, key) is None:
            return False
        if int(seconds) <= 0:
            self._drop(db, key)
            return True
        db.execute("INSERT OR REPLACE INTO expiry (key, at) VALUES (?, ?)", (key, now + int(seconds)))
        return True

    def _ttl(self, db: sqlite3.Connection, now: float, key: str) -> int:
        if self._type_of(db, key) is None:
            return -2
        row = db.execute("SELECT at FROM expiry WHERE key = ?", (key,)).fetchone()
        return -1 if row is None else max(0, round(row[0] - now))

    # -- strings -------------------------------------------------------------------------------
    def _get(self, db: sqlite3.Connection, now: float, key: str) -> str | None:
        row = db.execute("SELECT value FROM strings WHERE key = ?", (key,)).fetchone()
        if row is None and self._type_of(db, key) is not None:
            raise StoreError("WRONGTYPE Operation against a key holding the wrong kind of value")
        return None if row is None else str(row[0])

    def _set(
        self, db: sqlite3.Connection, now: float, key: str, value: Any, ex: int | None, get: bool
    ) -> Any:
        previous = self._get(db, now, key) if get else None
        if not get and self._type_of(db, key) not in (None, "strings"):
            self._drop(db, key)  # SET replaces a value of any type
        db.execute("INSERT OR REPLACE INTO strings (key, value) VALUES (?, ?)", (key, stored_text(value)))
        db.execute("DELETE FROM expiry WHERE key = ?", (key,))
        if ex is not None:
            db.execute("INSERT INTO expiry (key, at) VALUES (?, ?)", (key, now + int(ex)))
        return previous if get else True

    def _getdel(self, db: sqlite3.Connection, now: float, key: str) -> str | None:
        value = self._get(db, now, key)
        if value is not None:
            self._drop(db, key)
        return value

    def _incr(self, db: sqlite3.Connection, now: float, key: str, amount: int) -> int:
        raw = self._get(db, now, key) if self._require(db, key, "strings") else "0"
        try:
            value = int(raw or "0") + amount
        except ValueError:
            raise StoreError("ERR value is not an integer or out of range") from None
        db.execute("INSERT OR REPLACE INTO strings (key, value) VALUES (?, ?)", (key, str(value)))
        return value

    # -- sorted sets ---------------------------------------------------------------------------
    def _zadd(self, db: sqlite3.Connection, now: float, key: str, mapping: dict[Any, float]) -> int:
        self._require(db, key, "zsets")
        added = 0
        for member, score in mapping.items():
            name = stored_text(member)
            known = db.execute("SELECT 1 FROM zsets WHERE key = ? AND member = ?", (key, name)).fetchone()
            added += known is None
            row = (key, name, float(score))
            db.execute("INSERT OR REPLACE INTO zsets (key, member, score) VALUES (?, ?, ?)", row)
        return added

    def _zrem(self, db: sqlite3.Connection, now: float, key: str, *members: Any) -> int:
        self._require(db, key, "zsets")
        removed = 0
        for member in members:
            removed += db.execute(
                "DELETE FROM zsets WHERE key = ? AND member = ?", (key, stored_text(member))
            ).rowcount
        self._forget_if_empty(db, key)
        return removed

    def _zrange(
        self, db: sqlite3.Connection, now: float, key: str, start: int, end: int, withscores: bool
    ) -> list[Any]:
        self._require(db, key, "zsets")
        rows = db.execute("SELECT member, score FROM zsets WHERE key = ? ORDER BY score, member", (key,))
        picked = index_range(list(rows), start, end)
        return [(str(m), float(s)) for m, s in picked] if withscores else [str(m) for m, _ in picked]

    def _zrangebyscore(
        self, db: sqlite3.Connection, now: float, key: str, low: Any, high: Any, withscores: bool
    ) -> list[Any]:
        self._require(db, key, "zsets")
        (lo, lo_open), (hi, hi_open) = score_bound(low, True), score_bound(high, False)
        rows = db.execute(
            f"SELECT member, score FROM zsets WHERE key = ? AND score {'>' if lo_open else '>='} ? "
            f"AND score {'<' if hi_open else '<='} ? ORDER BY score, member",
            (key, lo, hi),
        )
        return [(str(m), float(sc)) for m, sc in rows] if withscores else [str(m) for m, _ in rows]

    def _zcard(self, db: sqlite3.Connection, now: float, key: str) -> int:
        self._require(db, key, "zsets")
        return int(db.execute("SELECT COUNT(*) FROM zsets WHERE key = ?", (key,)).fetchone()[0])

    def _zremrangebyscore(self, db: sqlite3.Connection, now: float, key: str, low: Any, high: Any) -> int:
        self._require(db, key, "zsets")
        (lo, lo_open), (hi, hi_open) = score_bound(low, True), score_bound(high, False)
        removed = db.execute(
            f"DELETE FROM zsets WHERE key = ? AND score {'>' if lo_open else '>='} ? "
            f"AND score {'<' if hi_open else '<='} ?",
            (key, lo, hi),
        ).rowcount
        self._forget_if_empty(db, key)
        return int(removed)

    # -- lists (newest first, as LPUSH makes them) ----------------------------------------------
    def _lpush(self, db: sqlite3.Connection, now: float, key: str, *values: Any) -> int:
        self._require(db, key, "lists")
        rows = [(key, stored_text(value)) for value in values]
        db.executemany("INSERT INTO lists (key, value) VALUES (?, ?)", rows)
        return int(db.execute("SELECT COUNT(*) FROM lists WHERE key = ?", (key,)).fetchone()[0])

    def _list_ids(self, db: sqlite3.Connection, key: str) -> list[tuple[int, str]]:
        self._require(db, key, "lists")
        return list(db.execute("SELECT id, value FROM lists WHERE key = ? ORDER BY id DESC", (key,)))

    def _lrange(self, db: sqlite3.Connection, now: float, key: str, start: int, end: int) -> list[str]:
        return [str(value) for _, value in index_range(self._list_ids(db, key), start, end)]

    def _ltrim(self, db: sqlite3.Connection, now: float, key: str, start: int, end: int) -> bool:
        items = self._list_ids(db, key)
        kept = {item_id for item_id, _ in index_range(items, start, end)}
        db.executemany("DELETE FROM lists WHERE id = ?", [(i,) for i, _ in items if i not in kept])
        self._forget_if_empty(db, key)
        return True

    def _forget_if_empty(self, db: sqlite3.Connection, key: str) -> None:
        """An emptied key is gone, its TTL with it (as in Redis)."""
        if self._type_of(db, key) is None:
            db.execute("DELETE FROM expiry WHERE key = ?", (key,))
