"""Sending the log's records to an OTLP collector, from where the last send stopped.

The log is the source: a cursor file next to it (``otlp-cursor.json``, 0600, written atomically) holds the
byte offset, seq and hash of the last record the collector accepted. Each ``ship()`` sends what follows, in
batches, and moves the cursor only after a 2xx answer, so a collector that is down loses nothing: the next
ship (after the next matching record, or ``canal audit ship``) sends it. A cursor that no longer matches the
log (the log was moved or rewritten) starts over from the first record; collectors dedupe by
``canal.record.hash``. A lock file keeps two processes of the project from sending the same records.

``notify(event)`` is the log's listener: a matching event wakes a background thread, so a run never waits
on the network; at exit the process waits for that thread up to the configured timeout.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.core.fsutil import FILE_MODE, atomic_write, private_dir
from canal.core.next import act
from canal.host.audit.errors import AuditExportError
from canal.host.audit.otlp import OtlpSettings, logs_request
from canal.host.audit.otlp_http import OtlpSetupError, post
from canal.host.audit.reader import iter_lines, record_ending_at
from canal.host.audit.record import MalformedRecord, Record, parse_line

BATCH = 200
Poster = Callable[[str, Mapping[str, Any], OtlpSettings], None]


@dataclass(frozen=True)
class Shipped:
    sent: int  # records the collector accepted in this call
    through: int  # seq of the last record looked at (sent or not matching)
    url: str


class OtlpShipper:
    def __init__(self, log_path: Path, settings: OtlpSettings, project_id: str, *,
                 poster: Poster = post) -> None:
        self.log_path = log_path
        self.settings = settings
        self.project_id = project_id
        self.cursor_path = log_path.with_name("otlp-cursor.json")
        self._poster = poster
        self._wake = threading.Lock()
        self._pending = False
        self._thread: threading.Thread | None = None
        self._at_exit = False

    def notify(self, event: str) -> None:
        """A record was appended: send it soon, in the background, if its event is one to send."""
        if self.settings.wants(event):
            self.kick()

    def kick(self) -> None:
        """Send what the collector has not had yet, in a background thread (one at a time)."""
        with self._wake:
            self._pending = True
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._drain, name="canal-otlp", daemon=True)
            self._thread.start()
            if not self._at_exit:
                atexit.register(self.flush)
                self._at_exit = True

    def flush(self) -> None:
        """Wait for the background send, up to the timeout (a slow collector never holds a process)."""
        thread = self._thread
        if thread is not None:
            thread.join(self.settings.timeout_s)

    def ship(self) -> Shipped:
        """Send every matching record after the cursor; raises ``AuditExportError`` if the collector
        does not accept a batch (the cursor then stays at the last accepted one)."""
        url = self.settings.logs_url()
        with self._locked():
            offset, through = self._start()
            sent = 0
            for batch, end, last_seq, last_hash in self._batches(offset):
                if batch:
                    self._send(url, batch, last_seq)
                    sent += len(batch)
                self._save({"url": url, "offset": end, "seq": last_seq, "hash": last_hash})
                through = last_seq
            return Shipped(sent, through, url)

    def _drain(self) -> None:
        while True:
            with self._wake:
                if not self._pending:
                    return
                self._pending = False
            with contextlib.suppress(AuditExportError, OSError):
                self.ship()  # a failure is in the cursor file (the audit.ship next action retries it)

    def _send(self, url: str, batch: list[tuple[Record, bytes]], last_seq: int) -> None:
        try:
            request = logs_request(batch, self.project_id, socket.gethostname())
            self._poster(url, request, self.settings)
        except OSError as exc:
            failed = f"sending records {batch[0][0].id}..{batch[-1][0].id} to {url} failed: {exc}"
            with contextlib.suppress(OSError):
                self._save({**self._cursor(), "error": failed})
            reachable = "check that the collector is up and reachable"
            hint = exc.hint if isinstance(exc, OtlpSetupError) else reachable
            raise AuditExportError(failed, hint=hint,
                                   next=act("audit.ship"),
                                   details={"url": url, "first": batch[0][0].seq, "last": last_seq}) from exc

    def _batches(self, offset: int) -> Iterator[tuple[list[tuple[Record, bytes]], int, int, str]]:
        """(matching records, end offset, seq and hash of the last record read) per batch."""
        batch: list[tuple[Record, bytes]] = []
        end, seq, mac = offset, 0, ""
        for line in iter_lines(self.log_path, start=offset):
            if not line.complete:
                break
            try:
                rec = parse_line(line.text)
            except MalformedRecord:
                break  # canal audit verify names it; nothing after a bad line is sent
            end, seq, mac = line.end, rec.seq, rec.hash
            if self.settings.wants(rec.event):
                batch.append((rec, line.text + b"\n"))
            if len(batch) >= BATCH:
                yield batch, end, seq, mac
                batch = []
        if end != offset:
            yield batch, end, seq, mac

    def _start(self) -> tuple[int, int]:
        """The offset to send from and the seq before it: the cursor's, if the log still holds its record
        there for the same URL, else the log's beginning."""
        cursor = self._cursor()
        offset, seq = cursor.get("offset"), cursor.get("seq")
        if cursor.get("url") != self.settings.logs_url() or not isinstance(offset, int) or offset <= 0:
            return 0, 0
        try:
            rec = record_ending_at(self.log_path, offset, follow=False)
        except OSError:
            return 0, 0
        if rec is None or rec.seq != seq or rec.hash != cursor.get("hash"):
            return 0, 0
        return offset, rec.seq

    def _cursor(self) -> dict[str, Any]:
        try:
            found = json.loads(self.cursor_path.read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _save(self, cursor: Mapping[str, Any]) -> None:
        atomic_write(self.cursor_path, json.dumps(dict(cursor), sort_keys=True).encode() + b"\n")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.cursor_path.parent)
        lock = self.cursor_path.with_name("otlp.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


_SHIPPERS: dict[tuple[Path, OtlpSettings, str], OtlpShipper] = {}
_SHIPPERS_LOCK = threading.Lock()


def shipper_for(log_path: Path, settings: OtlpSettings, project_id: str) -> OtlpShipper:
    """One shipper per log and settings in a process (a long-lived server makes many ``Services``)."""
    with _SHIPPERS_LOCK:
        key = (log_path, settings, project_id)
        if key not in _SHIPPERS:
            _SHIPPERS[key] = OtlpShipper(log_path, settings, project_id)
        return _SHIPPERS[key]


def last_error(log_path: Path) -> str | None:
    """The failure the last send left in the cursor file, if it failed."""
    try:
        found = json.loads(log_path.with_name("otlp-cursor.json").read_text())
    except (OSError, ValueError):
        return None
    error = found.get("error") if isinstance(found, dict) else None
    return error if isinstance(error, str) else None
