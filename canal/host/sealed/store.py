"""``SealedStore``: load and save sealed JSON documents under a lock plus a revision compare-and-swap.

``save`` holds the document's lock while it verifies the current file, compares its revision with
``expected_revision``, writes the new revision atomically (temp, fsync, rename, fsync folder) and
records it in the revision ledger. ``load`` needs no lock (renames are atomic) and checks the file
against the ledger, so an older valid copy put back in place is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from canal.core.fsutil import atomic_write, private_dir
from canal.core.locking import LockTimeout, file_lock
from canal.core.next import act
from canal.host.keys.store import KeyStore
from canal.host.ports import RevisionLedger
from canal.host.redact.redactor import Redactor
from canal.host.sealed import codec
from canal.host.sealed.crypto import FORMAT
from canal.host.sealed.envelope import Envelope
from canal.host.sealed.errors import (
    SEALED_DELETED,
    SEALED_FIELDS_CHANGED,
    SEALED_INVALID_DOCUMENT,
    SEALED_LOCK_TIMEOUT,
    SEALED_TRUNCATED,
    SEALED_UNKNOWN_VERSION,
    SealedError,
    SealedNotFoundError,
    SealedRevisionConflictError,
    SealedRolledBackError,
)
from canal.host.sealed.paths import Sensitive, matcher

DOC_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
SUFFIX = ".json"


class SealedStore:
    def __init__(self, root: Path, keys: KeyStore, ledger: RevisionLedger | None = None, *,
                 redactor: Redactor | None = None, lock_timeout: float = 10.0) -> None:
        self.root = root
        self.keys = keys
        self.ledger = ledger
        self._redactor = redactor
        self._lock_timeout = lock_timeout
        # doc_id -> (file identity, revision, secrets, sealed pointers) of the file this store last
        # verified or wrote; save() skips re-verifying a file that is still exactly that one
        self._verified: dict[str, tuple[tuple[int, int, int], int, dict[str, str], set[str]]] = {}

    @property
    def redactor(self) -> Redactor:
        if self._redactor is None:
            self._redactor = Redactor.from_keys(self.keys)
        return self._redactor

    def path_for(self, doc_id: str) -> Path:
        if not DOC_ID.match(doc_id) or ".." in doc_id:
            msg = f"{doc_id!r} is not a valid document id (letters, digits, '.', '_', '-'; 128 at most)"
            raise SEALED_INVALID_DOCUMENT(msg, next=act("state.verify", "lists the documents"))
        return self.root / (doc_id + SUFFIX)

    def ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name[: -len(SUFFIX)] for p in self.root.glob("*" + SUFFIX) if DOC_ID.match(p.stem))

    def envelope(self, doc_id: str) -> Envelope:
        """The parsed file, structure checked, nothing decrypted or verified yet."""
        path = self.path_for(doc_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise self._missing(doc_id) from None
        return _parse(doc_id, raw)

    def load(self, doc_id: str) -> tuple[Any, int]:
        """The verified plaintext document (secrets as placeholders) and its revision."""
        env = self._checked_envelope(doc_id)
        return codec.unseal(env, self.keys), env.revision

    def _checked_envelope(self, doc_id: str) -> Envelope:
        """The file, checked against the ledger. A writer may replace the file and record a newer
        revision between our read and our check: a file that changed since we read it is read again;
        a file that stays older than the ledger is a rollback."""
        env = self.envelope(doc_id)
        for _ in range(3):
            try:
                self._check_ledger(env)
            except SealedRolledBackError:
                again = self.envelope(doc_id)
                if again.revision == env.revision and again.mac == env.mac:
                    raise
                env = again
            else:
                return env
        self._check_ledger(env)
        return env

    def secrets(self, doc_id: str) -> dict[str, str]:
        """The sealed placeholder -> value map; read only when a value must flow into a later step."""
        env = self._checked_envelope(doc_id)
        codec.unseal(env, self.keys)
        return codec.unseal_secrets(env, self.keys)

    def save(self, doc_id: str, doc: Any, *, sensitive_paths: Sensitive = None,
             expected_revision: int) -> int:
        """Seal and write ``doc`` as revision ``expected_revision + 1``; 0 means a new document."""
        path = self.path_for(doc_id)
        with self._locked(doc_id):
            current, old_secrets, old_sealed = self._current(doc_id)
            if current != expected_revision:
                msg = (f"{doc_id} is at revision {current}, not {expected_revision}: another writer saved "
                       "first; nothing was written")
                raise SealedRevisionConflictError(
                    msg, hint=f"load {doc_id} again, reapply the change, then save",
                    details={"doc_id": doc_id, "current": current, "expected": expected_revision})
            env = codec.seal(doc, doc_id=doc_id, revision=current + 1, keys=self.keys,
                             is_sensitive=matcher(sensitive_paths, also=old_sealed), secrets=old_secrets,
                             redact_many=self.redactor.redact_many)
            private_dir(self.root)
            atomic_write(path, env.model_dump_json(indent=1).encode())
            if self.ledger is not None:
                self.ledger.record_revision(doc_id, env.revision, env.mac[:32])
            self._remember(doc_id, env.revision, dict(old_secrets), set(env.sealed))
            return env.revision

    def reseal(self, doc_id: str) -> int:
        """Rewrite ``doc_id`` under the primary key (after ``canal key rotate``); a new revision."""
        with self._locked(doc_id):
            env = self.envelope(doc_id)
            doc = codec.unseal(env, self.keys)
            self._check_ledger(env)
            secrets = codec.unseal_secrets(self.envelope(doc_id), self.keys)
            new = codec.seal(doc, doc_id=doc_id, revision=env.revision + 1, keys=self.keys,
                             is_sensitive=matcher(None, also=set(env.sealed)), secrets=secrets)
            atomic_write(self.path_for(doc_id), new.model_dump_json(indent=1).encode())
            if self.ledger is not None:
                self.ledger.record_revision(doc_id, new.revision, new.mac[:32])
            return new.revision

    def _current(self, doc_id: str) -> tuple[int, dict[str, str], set[str]]:
        identity = _identity(self.path_for(doc_id))
        if identity is None:
            if self.ledger is not None and self.ledger.latest_revision(doc_id) is not None:
                raise self._missing(doc_id)
            return 0, {}, set()
        cached = self._verified.get(doc_id)
        if cached is not None and cached[0] == identity:
            if self.ledger is not None:
                self._check_revision(doc_id, cached[1])
            return cached[1], dict(cached[2]), set(cached[3])
        env = self.envelope(doc_id)
        codec.unseal(env, self.keys)
        self._check_ledger(env)
        secrets = codec.unseal_secrets(self.envelope(doc_id), self.keys)
        return env.revision, secrets, set(env.sealed)

    def _remember(self, doc_id: str, revision: int, secrets: dict[str, str], sealed: set[str]) -> None:
        identity = _identity(self.path_for(doc_id))
        if identity is not None:
            self._verified[doc_id] = (identity, revision, secrets, sealed)

    def _check_revision(self, doc_id: str, revision: int) -> None:
        latest = self.ledger.latest_revision(doc_id) if self.ledger is not None else None
        if latest is not None and revision < latest[0]:
            msg = f"{doc_id} is revision {revision}, but revision {latest[0]} was recorded later"
            raise SealedRolledBackError(msg, hint=f"restore the newest copy of {doc_id}",
                                        details={"doc_id": doc_id, "file_revision": revision,
                                                 "recorded_revision": latest[0]})

    def _check_ledger(self, env: Envelope) -> None:
        if self.ledger is None:
            return
        latest = self.ledger.latest_revision(env.doc_id)
        if latest is None or env.revision > latest[0]:
            # a write that reached the disk but not the ledger (crash in between): catch up
            self.ledger.record_revision(env.doc_id, env.revision, env.mac[:32])
            return
        if env.revision < latest[0] or env.mac[:32] != latest[1]:
            msg = (f"{env.doc_id} is revision {env.revision}, but revision {latest[0]} was recorded "
                   "later: the file was rolled back or replaced by another copy")
            raise SealedRolledBackError(msg, hint=f"restore the newest copy of {env.doc_id}",
                                        details={"doc_id": env.doc_id, "file_revision": env.revision,
                                                 "recorded_revision": latest[0]})

    def _missing(self, doc_id: str) -> SealedNotFoundError | SealedError:
        if self.ledger is not None and (latest := self.ledger.latest_revision(doc_id)) is not None:
            msg = f"{doc_id} was at revision {latest[0]} but its file is gone: it was deleted outside Canal"
            return SEALED_DELETED(msg, hint=f"restore {self.path_for(doc_id)} from a backup",
                                      details={"doc_id": doc_id, "recorded_revision": latest[0]})
        msg = f"no sealed document {doc_id} in {self.root}"
        return SealedNotFoundError(msg, next=act("state.verify", "lists the documents"),
                                   details={"doc_id": doc_id})

    @contextmanager
    def _locked(self, doc_id: str) -> Iterator[None]:
        try:
            with file_lock(self.root / ".locks" / (doc_id + ".lock"), self._lock_timeout):
                yield
        except LockTimeout as exc:
            msg = f"{doc_id} stayed locked by another process for {exc.waited:.1f}s"
            raise SEALED_LOCK_TIMEOUT(msg, hint="retry; if it persists, look for a stuck canal process",
                                         details={"lock": str(exc.path)}) from exc


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _parse(doc_id: str, raw: bytes) -> Envelope:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{doc_id}: the file is cut short or not JSON ({len(raw)} bytes)"
        raise SEALED_TRUNCATED(msg, hint=f"restore {doc_id} from a backup; Canal will not overwrite it",
                                   details={"doc_id": doc_id, "size": len(raw)}) from exc
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt != FORMAT:
        msg = f"{doc_id}: unknown sealed format {fmt!r}; this Canal reads {FORMAT}"
        raise SEALED_UNKNOWN_VERSION(msg, hint="upgrade Canal (pip install -U canal) to read it",
                                        details={"doc_id": doc_id, "format": str(fmt)})
    try:
        env = Envelope.model_validate(data)
    except ValidationError as exc:
        msg = f"{doc_id}: the file's header is damaged ({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})"
        raise SEALED_FIELDS_CHANGED(msg, hint=f"restore {doc_id} from a backup",
                                       details={"doc_id": doc_id}) from exc
    if env.doc_id != doc_id:
        msg = f"the file of {doc_id} holds document {env.doc_id}: files were swapped or renamed"
        raise SEALED_FIELDS_CHANGED(msg, hint=f"restore {doc_id} from a backup",
                                       details={"doc_id": doc_id})
    return env


