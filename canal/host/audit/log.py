"""The audit log: one append-only JSONL file per project, hash-chained and signed with a host key.

Appends from several processes interleave safely: each append opens the file with ``O_APPEND``, takes an
exclusive ``flock``, reads the last record (seq, hash) under the lock, writes one line and syncs it to
disk before the lock is released. A failed write is rolled back and raised as ``AUDIT_WRITE_FAILED``:
the caller must not act without its record.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from canal.core.fsutil import FILE_MODE, fsync_dir, private_dir
from canal.core.next import act
from canal.host.audit.errors import AUDIT_LOG_CORRUPT, AUDIT_RECORD_INVALID, AUDIT_WRITE_FAILED, AuditError
from canal.host.audit.ledger import RevisionIndex
from canal.host.audit.reader import Line, iter_lines, last_line
from canal.host.audit.record import (
    EVENT_NAME,
    GENESIS_HASH,
    OPENED_EVENT,
    SCHEMA_VERSION,
    MalformedRecord,
    build_line,
    parse_line,
    record_id,
)
from canal.host.ports import Redactor, no_redaction

# Values we computed ourselves (hashes, ids): never handed to the redactor, whose entropy checks could
# mistake a hex digest for a secret and break the revision ledger; ``started``, the intent record an
# outcome closes (a new id at every command, which the redactor scanned anew, 50 us each)
INTEGRITY_KEYS = frozenset({"digest", "hash", "sha256", "policy_hash", "image_digest", "output_sha256",
                            "container_id", "record_id", "started"})
OPEN_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def audit_path(state_dir: Path) -> Path:
    return state_dir / "audit" / "audit.jsonl"


def utc_timestamp() -> str:
    """``2026-12-01T23:15:33.123456Z`` (isoformat: a third of strftime's cost, on every record)."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


class AuditLog:
    """Implements ``host.ports.AuditSink`` and ``host.ports.RevisionLedger``."""

    def __init__(self, path: Path, key: bytes, key_id: str, *, redact: Redactor = no_redaction,
                 clock: Callable[[], str] = utc_timestamp,
                 earlier_keys: Mapping[str, bytes] | None = None, project_id: str | None = None) -> None:
        if len(key) < 16:
            msg = "the audit key must be at least 16 bytes"
            raise ValueError(msg)
        self.path = path
        self.key_id = key_id
        self.project_id = project_id  # when set, a new log opens with a record naming it
        self._key = key
        self._redact = redact
        self._clock = clock
        self._head: tuple[int, int, int, str] | None = None  # (inode, size, seq, hash) after our append
        self.listeners: list[Callable[[str], None]] = []  # told each appended event (audit.shipper)
        # appends so far, and how many of them are on disk: a sync covers what was written before it
        # began, never an append that came while it ran (another thread's, in the server)
        self._written = self._synced = 0
        self._counts = threading.Lock()
        # earlier_keys (key id -> key) verify records signed before a key rotation
        self._revisions = RevisionIndex(path, path.with_name("revisions.json"), key, key_id, earlier_keys)

    # AuditSink
    def append(self, event: str, data: Mapping[str, Any], *, actor: str = "agent",
               durable: bool = True) -> str:
        """Write one record and return its id (``a-000042``).

        ``durable`` (the default) syncs it to disk before returning. ``durable=False`` is for a record
        whose loss in a power cut is itself visible, as a run's outcome is (its intent, written durably,
        then reads as interrupted): the line is written (a crash of this process keeps it), and the next
        durable append, or ``sync()``, puts it on disk with the same ``fdatasync``.
        """
        if not EVENT_NAME.match(event):
            msg = f"event name {event!r} is not dotted lower case like 'run.started'"
            raise AUDIT_RECORD_INVALID(msg, details={"event": event})
        record = self._append(event, _redact_values(data, self._redact), actor, durable)
        for listener in self.listeners:
            listener(event)
        return record

    def sync(self) -> None:
        """Put records appended with ``durable=False`` on disk (every one appended before this call)."""
        with self._counts:
            target = self._written
            if self._synced >= target:
                return
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                os.fdatasync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise _write_failed(self.path, "sync", exc) from exc
        self._on_disk(target)

    def _on_disk(self, count: int) -> None:
        with self._counts:
            self._synced = max(self._synced, count)

    # RevisionLedger
    def record_revision(self, doc_id: str, revision: int, digest: str) -> None:
        self._append("state.revision", {"doc": doc_id, "revision": revision, "digest": digest}, "canal")

    def latest_revision(self, doc_id: str) -> tuple[int, str] | None:
        return self._revisions.latest(doc_id)

    def known_documents(self) -> list[str]:
        """Every sealed document the log has a revision of (``canal state verify`` checks each)."""
        return self._revisions.documents()

    def lines(self) -> Iterator[Line]:
        """Every line of the log as written (no verification; see ``host.audit.verify``)."""
        return iter_lines(self.path)

    def _append(self, event: str, data: Mapping[str, Any], actor: str, durable: bool = True) -> str:
        fd = self._open()
        try:
            _lock(fd, self.path)
            stat = os.fstat(fd)
            seq, prev_hash = self._tail(fd, stat.st_ino, stat.st_size)
            size = stat.st_size
            if seq == 0 and self.project_id is not None:
                opened = {"project_id": self.project_id, "key_id": self.key_id}
                line, prev_hash = self._line(1, OPENED_EVENT, opened, "canal", prev_hash)
                _write_durably(fd, line, size, self.path, OPENED_EVENT)
                seq, size = 1, size + len(line)
            line, mac = self._line(seq + 1, event, data, actor, prev_hash)
            with self._counts:
                self._written += 1
                count = self._written
            _write_durably(fd, line, size, self.path, event, sync=durable)
            if durable:
                self._on_disk(count)
            self._head = _HEADS[str(self.path)] = (stat.st_ino, size + len(line), seq + 1, mac)
            return record_id(seq + 1)
        finally:
            os.close(fd)  # also releases the lock

    def _line(self, seq: int, event: str, data: Mapping[str, Any], actor: str,
              prev_hash: str) -> tuple[bytes, str]:
        body = {"v": SCHEMA_VERSION, "seq": seq, "ts": self._clock(), "event": event,
                "actor": actor, "key_id": self.key_id, "data": dict(data), "prev_hash": prev_hash}
        try:
            return build_line(body, self._key)
        except (TypeError, ValueError) as exc:
            msg = f"data of event {event} is not plain JSON: {exc}"
            raise AUDIT_RECORD_INVALID(msg, details={"event": event}) from exc

    def _open(self) -> int:
        try:
            folder = private_dir(self.path.parent)
            try:
                fd = os.open(self.path, OPEN_FLAGS & ~os.O_CREAT)
            except FileNotFoundError:
                fd = os.open(self.path, OPEN_FLAGS, FILE_MODE)
                fsync_dir(folder)  # the new name survives a power cut with the record in it
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, FILE_MODE)
        except OSError as exc:
            raise _write_failed(self.path, "open", exc) from exc
        return fd

    def _tail(self, fd: int, inode: int, size: int) -> tuple[int, str]:
        head = self._head or _HEADS.get(str(self.path))
        if head is not None and head[:2] == (inode, size):
            return head[2], head[3]
        line = last_line(fd, size)
        if line is None:
            return 0, GENESIS_HASH
        verify = act("audit.verify", f"then move {self.path.name} aside to start a new log")
        if not line.complete:
            msg = f"the last line of {self.path} is partial (a torn write); no record can be chained to it"
            raise AUDIT_LOG_CORRUPT(msg, next=verify, details={"path": str(self.path)})
        try:
            last = parse_line(line.text)
        except MalformedRecord as exc:
            msg = f"the last line of {self.path} is not a record ({exc})"
            raise AUDIT_LOG_CORRUPT(msg, next=verify, details={"path": str(self.path)}) from exc
        return last.seq, last.hash


# The head each log of this process last appended, by path: a later AuditLog of the same file (the server
# makes one per request) chains to it without reading and parsing the last line. Used only while the
# file's inode and size, read under the lock, are what that append left; any other writer changes them.
_HEADS: dict[str, tuple[int, int, int, str]] = {}


def _lock(fd: int, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:
        raise _write_failed(path, "lock", exc) from exc


def _write_durably(fd: int, line: bytes, size_before: int, path: Path, event: str, *,
                   sync: bool = True) -> None:
    try:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fdatasync(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size_before)  # roll a partial line back so the chain stays whole
        raise _write_failed(path, f"write {event}", exc) from exc


def _write_failed(path: Path, step: str, exc: OSError) -> AuditError:
    msg = f"could not {step} the audit log {path}: {exc.strerror or exc}. Nothing was run without its record."
    return AUDIT_WRITE_FAILED(msg, hint=f"free disk space or fix permissions on {path.parent}, then retry",
                           details={"path": str(path), "step": step, "errno": exc.errno})


def _redact_values(value: Any, redact: Redactor, key: str = "") -> Any:
    kind = type(value)
    if value is None or kind is bool or kind is int:  # most fields of a record: nothing to look at
        return value
    if kind is str or isinstance(value, str):
        if key in INTEGRITY_KEYS:
            return value
        # the field name is context a detector needs ({"DB_PASSWORD": "..."} reads as DB_PASSWORD=...)
        prefix = f"{key}="
        joined = redact(prefix + value) if key else redact(value)
        return joined[len(prefix):] if key and joined.startswith(prefix) else joined
    if kind is dict or isinstance(value, Mapping):
        return {str(k): _redact_values(v, redact, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_values(v, redact, key) for v in value]
    return value
