"""The revision ledger: the newest revision of each sealed document, as recorded in the audit log.

``latest_revision`` must not rescan the log on every call, so an index (``revisions.json``) remembers
the answer up to a byte offset of the log, with the seq and hash of the record that ends there. The
index is HMAC-signed; a missing, unsigned or stale index is rebuilt from the log, and every record read
on the way is verified (digest, HMAC, chain). A log shorter than its index, or whose record at the
index's anchor changed, is a rollback: that fails closed.
"""

from __future__ import annotations

import contextlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canal.core.fsutil import atomic_write
from canal.core.next import act
from canal.host.audit.errors import AUDIT_TAMPERED
from canal.host.audit.reader import iter_lines, record_ending_at
from canal.host.audit.record import GENESIS_HASH, MalformedRecord, Record, canonical, parse_line, sign
from canal.host.audit.verify import Head, check_record

REVISION_EVENT = "state.revision"
SAVE_AFTER = 256  # records read past the saved index before it is rewritten


@dataclass
class _State:
    offset: int = 0
    head: Head = field(default_factory=lambda: Head(0, GENESIS_HASH))
    docs: dict[str, tuple[int, str]] = field(default_factory=dict)


class RevisionIndex:
    def __init__(self, log_path: Path, index_path: Path, key: bytes, key_id: str,
                 earlier_keys: Mapping[str, bytes] | None = None) -> None:
        self._earlier = dict(earlier_keys or {})
        self._log = log_path
        self._index = index_path
        self._key = key
        self._key_id = key_id
        self._state: _State | None = None

    def latest(self, doc_id: str) -> tuple[int, str] | None:
        return self._current().docs.get(doc_id)

    def documents(self) -> list[str]:
        return sorted(self._current().docs)

    def _current(self) -> _State:
        size = _size(self._log)
        state, from_index = self._state, False
        if state is None:
            loaded = self._load()
            state, from_index = (loaded, True) if loaded is not None else (_State(), False)
        rebuilt = self._state is None and not from_index
        if size < state.offset:
            msg = (f"the audit log {self._log} is shorter ({size} bytes) than its revision index "
                   f"({state.offset} bytes): records were removed")
            raise AUDIT_TAMPERED(msg, next=act("audit.verify"), details={"path": str(self._log)})
        if from_index and state.offset > 0:
            self._check_anchor(state)
        if size > state.offset:
            read = self._catch_up(state)
            if read >= SAVE_AFTER or rebuilt:
                self._save(state)
        self._state = state
        return state

    def _catch_up(self, state: _State) -> int:
        read = 0
        for line in iter_lines(self._log, start=state.offset, first_number=state.head.seq + 1):
            if not line.complete:
                break  # an append in progress, or a torn write that verify reports
            rec = _parsed(line.text, state.head.seq + 1, self._log)
            problem = check_record(rec, self._key, self._key_id, state.head, self._earlier)
            if problem is not None:
                msg = f"audit log {self._log}: {problem[1]}"
                raise AUDIT_TAMPERED(msg, next=act("audit.verify"),
                                         details={"kind": problem[0], "seq": rec.seq})
            if rec.event == REVISION_EVENT:
                state.docs[str(rec.data["doc"])] = (int(rec.data["revision"]), str(rec.data["digest"]))
            state.offset, state.head, read = line.end, Head(rec.seq, rec.hash), read + 1
        return read

    def _load(self) -> _State | None:
        try:
            raw: Any = json.loads(self._index.read_bytes())
            mac = raw.pop("mac")
            ok = raw.get("key_id") == self._key_id and hmac.compare_digest(mac, sign(self._key,
                                                                                        canonical(raw)))
            state = _State(int(raw["offset"]), Head(int(raw["seq"]), str(raw["hash"])),
                           {d: (int(r), str(g)) for d, (r, g) in raw["docs"].items()}) if ok else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # unreadable or unsigned: rebuild from the log
        return state

    def _check_anchor(self, state: _State) -> None:
        rec = record_ending_at(self._log, state.offset)
        if rec is not None and (rec.seq, rec.hash) == (state.head.seq, state.head.hash):
            return
        msg = (f"the audit log {self._log} no longer holds record {state.head.seq} where its revision "
               "index saw it: the log was rewritten or replaced")
        verify = act("audit.verify", f"if the log was reset on purpose, delete {self._index} to rebuild it")
        raise AUDIT_TAMPERED(msg, next=verify, details={"path": str(self._log)})

    def _save(self, state: _State) -> None:
        body = {"v": 1, "key_id": self._key_id, "offset": state.offset, "seq": state.head.seq,
                "hash": state.head.hash, "docs": {d: list(v) for d, v in state.docs.items()}}
        with contextlib.suppress(OSError):  # the index is a cache; the log stays the truth
            atomic_write(self._index, canonical({**body, "mac": sign(self._key, canonical(body))}))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _parsed(text: bytes, seq: int, path: Path) -> Record:
    try:
        return parse_line(text)
    except MalformedRecord as exc:
        msg = f"audit log {path}: the line after record {seq - 1} is not a record ({exc})"
        raise AUDIT_TAMPERED(msg, next=act("audit.verify"), details={"kind": "corrupt"}) from exc
