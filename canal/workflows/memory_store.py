"""An in-memory ``RunStore`` (no sealing): for unit tests and benchmarks of the engine alone.

Documents go through a JSON round trip on every write and read, as they would on disk, so a value that
cannot be persisted fails here too. The sensitive paths of each save are kept for tests to check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from canal.core.next import act
from canal.workflows.errors import RUN_CONFLICT, RUN_NOT_FOUND
from canal.workflows.ports import JsonPath, StoredRun


class MemoryRunStore:
    def __init__(self) -> None:
        self._docs: dict[str, tuple[str, int]] = {}
        self.sensitive: dict[str, list[JsonPath]] = {}
        self.writes = 0

    def create(self, run_id: str, doc: Mapping[str, Any], *, sensitive_paths: Sequence[JsonPath]) -> int:
        if run_id in self._docs:
            msg = f"run {run_id} already exists"
            raise RUN_CONFLICT(msg)
        return self._put(run_id, doc, 1, sensitive_paths)

    def load(self, run_id: str) -> StoredRun:
        if run_id not in self._docs:
            msg = f"no run {run_id}"
            raise RUN_NOT_FOUND(msg, next=act("workflow.runs"))
        text, revision = self._docs[run_id]
        return StoredRun(doc=json.loads(text), revision=revision)

    def save(self, run_id: str, doc: Mapping[str, Any], *, expected_revision: int,
             sensitive_paths: Sequence[JsonPath]) -> int:
        if run_id not in self._docs:
            msg = f"no run {run_id}"
            raise RUN_NOT_FOUND(msg, next=act("workflow.runs"))
        current = self._docs[run_id][1]
        if current != expected_revision:
            msg = f"run {run_id} changed (revision {current}, expected {expected_revision})"
            raise RUN_CONFLICT(msg,
                                   next=act("workflow.current", run_id=run_id))
        return self._put(run_id, doc, current + 1, sensitive_paths)

    def list_ids(self) -> list[str]:
        return sorted(self._docs)

    def raw(self, run_id: str) -> str:
        return self._docs[run_id][0]

    def _put(self, run_id: str, doc: Mapping[str, Any], revision: int, paths: Sequence[JsonPath]) -> int:
        self._docs[run_id] = (json.dumps(doc, sort_keys=True), revision)
        self.sensitive[run_id] = [tuple(p) for p in paths]
        self.writes += 1
        return revision
