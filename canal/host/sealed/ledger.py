"""Small ``RevisionLedger`` implementations (host.ports): in memory, and a JSON file.

The production ledger is the audit log (host.audit). The file ledger suits tests and setups
without an audit log; kept next to the state files, it only catches rollbacks of single files.
"""

from __future__ import annotations

import json
from pathlib import Path

from canal.core.fsutil import atomic_write
from canal.core.locking import file_lock


class MemoryLedger:
    def __init__(self) -> None:
        self._docs: dict[str, tuple[int, str]] = {}

    def record_revision(self, doc_id: str, revision: int, digest: str) -> None:
        self._docs[doc_id] = (revision, digest)

    def latest_revision(self, doc_id: str) -> tuple[int, str] | None:
        return self._docs.get(doc_id)


class FileLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def record_revision(self, doc_id: str, revision: int, digest: str) -> None:
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            docs = self._read()
            current = docs.get(doc_id)
            if current is None or current[0] <= revision:
                docs[doc_id] = (revision, digest)
                atomic_write(self.path, json.dumps({k: list(v) for k, v in docs.items()},
                                                   sort_keys=True).encode())

    def latest_revision(self, doc_id: str) -> tuple[int, str] | None:
        return self._read().get(doc_id)

    def _read(self) -> dict[str, tuple[int, str]]:
        try:
            raw = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        return {k: (int(v[0]), str(v[1])) for k, v in raw.items()}
