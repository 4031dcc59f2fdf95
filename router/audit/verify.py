"""`./safeclaw audit verify` (and `python -m router.audit verify [DIR]`): the audit log's files,
the sealed list of the folder's chains (a chain deleted whole), each chain's end against its keyed
checkpoint, and against the Redis audit stream when REDIS_URL answers (it says when it did not).

Exit status:
  0  every chain is intact and its last line is vouched for (by its checkpoint or the Redis copy);
  1  something is broken (the message names the first break);
  2  the files' chains are intact, but the end of at least one could not be checked (no
     checkpoint, no key, lines newer than the checkpoint with Redis unreachable): lines cut
     from the end of that chain would not show. The message says which and why.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from protocol.keys import Keys
from protocol.redis_link import sync_client
from router.audit import checkpoint as audit_checkpoint
from router.audit.chain_check import Verdict, hash_at, verify_directory

OK, BROKEN, UNCHECKED = 0, 1, 2


@dataclass
class Report:
    verdict: Verdict
    broken: str = ""  # a chain's end does not match its checkpoint or the Redis copy
    unchecked: list[str] = field(default_factory=list)  # chains whose end nobody vouched for, and why
    sources: list[str] = field(default_factory=list)  # what vouched for the ends

    @property
    def exit_code(self) -> int:
        if not self.verdict.ok or self.broken:
            return BROKEN
        return UNCHECKED if self.unchecked else OK

    def summary(self) -> str:
        if not self.verdict.ok:
            return self.verdict.summary()
        if self.broken:
            return f"audit log BROKEN: {self.broken}"
        head = f"audit log intact: {self.verdict.lines} lines"
        if self.unchecked:
            return (
                f"{head}, but the end is NOT checked for "
                + "; ".join(self.unchecked)
                + " — lines cut from the end there would not show (exit 2)"
            )
        return f"{head}; each chain's end is vouched for by {' and '.join(sorted(set(self.sources)))}"


def _against_redis(name: str, head: tuple[int, str], mirrored: tuple[int, str]) -> tuple[str, bool]:
    """(a break, whether the copy vouches for the end)."""
    (last_seq, last_hash), (seq, digest) = head, mirrored
    if last_seq < seq:
        return (
            f"chain {name}: {seq - last_seq} line(s) deleted at the end (the file ends at seq "
            f"{last_seq}; the Redis audit stream holds seq {seq})"
        ), False
    if last_seq == seq and last_hash != digest:
        return (
            f"chain {name}: its last line (seq {seq}) differs from the copy in the Redis audit stream",
            False,
        )
    return "", last_seq == seq


def _against_checkpoint(
    directory: Path, name: str, head: tuple[int, str], key: bytes | None
) -> tuple[str, str]:
    """(a break, why the end is unchecked); both empty when the checkpoint vouches for the end."""
    try:
        found = audit_checkpoint.read(directory, name)
    except ValueError as exc:
        return f"chain {name}: {exc}", ""
    if found is None:
        return "", f"chain {name}: no checkpoint ({audit_checkpoint.path_of(directory, name).name})"
    if key is None:
        return "", f"chain {name}: no audit key to check its checkpoint with"
    if not audit_checkpoint.genuine(found, key, name):
        return f"chain {name}: its checkpoint does not seal under the audit key (forged or damaged)", ""
    if found.seq > head[0]:
        return (
            f"chain {name}: {found.seq - head[0]} line(s) deleted at the end (the files end at seq "
            f"{head[0]}; the checkpoint holds seq {found.seq})"
        ), ""
    if hash_at(directory, name, found.seq) != found.digest:
        return (
            f"chain {name}: rewritten at or before seq {found.seq} (its hash differs from the checkpoint's)",
            "",
        )
    if found.seq < head[0]:
        return "", f"chain {name}: {head[0] - found.seq} line(s) after its checkpoint (seq {found.seq})"
    return "", ""


def _against_chain_list(directory: Path, names: list[str], key: bytes | None) -> tuple[str, str]:
    """(a break, why the list of chains is unchecked): a chain listed in the sealed list with no
    files was deleted whole."""
    try:
        found = audit_checkpoint.read_chains(directory)
    except ValueError as exc:
        return str(exc), ""
    if found is None:
        if not any(directory.glob(f"*{audit_checkpoint.SUFFIX}")):
            return "", ""  # written without a key: nothing was sealed, the ends say so themselves
        name = audit_checkpoint.CHAINS_FILE
        return "", f"no sealed list of chains ({name}): a chain deleted whole would not show"
    if key is not None and not found.genuine(key):
        return f"{audit_checkpoint.CHAINS_FILE} does not seal under the audit key (forged or damaged)", ""
    gone = [name for name in found.names if name not in names]
    if gone:
        return f"chain {gone[0]}: its files are gone (the sealed list of chains names it)", ""
    return "", ""


def verify(directory: Path, key: bytes | None, mirrored: dict[str, tuple[int, str]] | None) -> Report:
    """`mirrored`: each router's newest line in the Redis stream; None when Redis is unreachable."""
    report = Report(verify_directory(directory))
    if not report.verdict.ok and not report.verdict.lines and directory.is_dir():
        broken, _why = _against_chain_list(directory, [], key)
        if broken:
            report.broken = broken
    if not report.verdict.ok:
        return report
    report.broken, why = _against_chain_list(directory, sorted(report.verdict.heads), key)
    if report.broken:
        return report
    if why:
        report.unchecked.append(why)
    for name, head in sorted(report.verdict.heads.items()):
        vouched = False
        if mirrored is not None and name in mirrored:
            report.broken, vouched = _against_redis(name, head, mirrored[name])
            if report.broken:
                return report
            if vouched:
                report.sources.append("the Redis audit stream")
        report.broken, why = _against_checkpoint(directory, name, head, key)
        if report.broken:
            return report
        if not why:
            report.sources.append("its keyed checkpoint")
        elif not vouched:
            reach = "" if mirrored is not None else ", and Redis is not reachable"
            report.unchecked.append(why + reach)
    if mirrored is not None:  # a router the stream knows that has no file at all
        for name, (seq, _digest) in sorted(mirrored.items()):
            if name not in report.verdict.heads:
                report.broken = f"chain {name}: its files are gone (the Redis audit stream holds seq {seq})"
                return report
    return report


def key_for(environ: dict[str, str] | None = None) -> bytes | None:
    """The router's audit key, as its settings name it; None when there is none."""
    from router.config.env_sources import merged_environment
    from router.config.settings import DEFAULT_ENV_FILE, audit_key_file

    env = merged_environment(DEFAULT_ENV_FILE) if environ is None else environ
    try:
        return audit_checkpoint.load_key(audit_key_file(env))
    except audit_checkpoint.AuditKeyError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./safeclaw python -m router.audit verify", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("directory", nargs="?", type=Path, help="the audit folder (default: the router's)")
    parser.add_argument("--key-file", type=Path, help="the audit key (default: the router's)")
    args = parser.parse_args(argv)
    from router.config.env_sources import merged_environment
    from router.config.settings import DEFAULT_ENV_FILE, audit_directory

    env = merged_environment(DEFAULT_ENV_FILE)
    directory = args.directory or audit_directory(env)
    key = key_for(env)
    if args.key_file is not None:
        try:
            key = audit_checkpoint.load_key(args.key_file)
        except audit_checkpoint.AuditKeyError as exc:
            print(f"audit verify: {exc}", file=sys.stderr)
            key = None
    mirrored = read_mirror(env)
    report = verify(directory, key, mirrored)
    print(report.summary())
    return report.exit_code


def mirrored_heads(conn: redis.Redis, stream: str, scan: int = 10_000) -> dict[str, tuple[int, str]]:
    """Each chain's newest line in the Redis audit stream: (seq, hash)."""
    heads: dict[str, tuple[int, str]] = {}
    entries: Any = conn.xrevrange(stream, count=scan)
    for _id, fields in entries:
        line = fields.get(b"line", fields.get("line", b""))
        try:
            record = json.loads(line)
            name, seq, digest = str(record["router"]), int(record["seq"]), str(record["hash"])
        except (ValueError, KeyError, TypeError):
            continue
        heads.setdefault(name, (seq, digest))
    return heads


def read_mirror(env: Mapping[str, str]) -> dict[str, tuple[int, str]] | None:
    """The Redis copy's heads when REDIS_URL is set and Redis answers; None (said on stdout) else."""
    url = env.get("REDIS_URL", "")
    if not url:
        print("(no REDIS_URL: the Redis audit stream was not read; the ends are checked against the "
              "checkpoints only)")
        return None
    try:
        conn = sync_client(url, decode_responses=False, socket_timeout=10,
                           accepted_eviction=env.get("REDIS_ACCEPT_EVICTION", "").strip())
        try:
            return mirrored_heads(conn, Keys.from_env(env).audit_stream)
        finally:
            conn.close()
    except Exception as exc:  # down, refusing, or an answer of another shape: not read, said so
        print(f"(the Redis audit stream was not read: {type(exc).__name__}; the ends are checked against "
              "the checkpoints only)")
        return None


if __name__ == "__main__":
    sys.exit(main())
