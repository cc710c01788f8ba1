"""``SealedRunStore``: the engine's ``RunStore`` over the sealed store (one sealed document per run).

Values at the engine's ``sensitive_paths`` (sensitive gate fields, step results, outputs, errors) are
sealed with AES-256-GCM; secrets the redactor finds anywhere are stored as placeholders and restored on
load, so a later step still receives the real value. Sealed-store errors become the engine's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from canal.core.next import act
from canal.host.sealed.errors import SealedNotFoundError, SealedRevisionConflictError
from canal.host.sealed.store import SealedStore
from canal.workflows.errors import RUN_CONFLICT, RUN_NOT_FOUND
from canal.workflows.ports import JsonPath, StoredRun

DOC_PREFIX = "wfrun."
PLACEHOLDER_MARK = "[REDACTED_SECRET:"


class SealedRunStore:
    def __init__(self, sealed: SealedStore) -> None:
        self.sealed = sealed

    @staticmethod
    def doc_id(run_id: str) -> str:
        return DOC_PREFIX + run_id

    def create(self, run_id: str, doc: Mapping[str, Any], *, sensitive_paths: Sequence[JsonPath]) -> int:
        return self._save(run_id, doc, 0, sensitive_paths)

    def save(self, run_id: str, doc: Mapping[str, Any], *, expected_revision: int,
             sensitive_paths: Sequence[JsonPath]) -> int:
        return self._save(run_id, doc, expected_revision, sensitive_paths)

    def _save(self, run_id: str, doc: Mapping[str, Any], expected: int,
              sensitive_paths: Sequence[JsonPath]) -> int:
        try:
            return self.sealed.save(self.doc_id(run_id), dict(doc), sensitive_paths=_exactly(sensitive_paths),
                                    expected_revision=expected)
        except SealedRevisionConflictError as exc:
            what = "already exists" if expected == 0 else "was saved by another process first"
            msg = f"run {run_id} {what}; nothing was written"
            raise RUN_CONFLICT(msg, next=act("workflow.current", run_id=run_id),
                                   details={"run_id": run_id, **exc.details}) from exc

    def load(self, run_id: str) -> StoredRun:
        doc_id = self.doc_id(run_id)
        try:
            doc, revision = self.sealed.load(doc_id)
        except SealedNotFoundError as exc:
            msg = f"no workflow run {run_id}"
            raise RUN_NOT_FOUND(msg, next=act("workflow.runs"), details={"run_id": run_id}) from exc
        if _has_placeholder(doc):
            doc = _restore(doc, self.sealed.secrets(doc_id))
        return StoredRun(doc=doc, revision=revision)

    def list_ids(self) -> list[str]:
        return [i.removeprefix(DOC_PREFIX) for i in self.sealed.ids() if i.startswith(DOC_PREFIX)]


def _exactly(paths: Sequence[JsonPath]) -> Callable[[tuple[str | int, ...]], bool]:
    """The sealed store's predicate for "seal this node": exactly these paths (keys are taken whole,
    never split on dots or read as wildcards)."""
    wanted = frozenset(tuple(paths))

    def is_sensitive(path: tuple[str | int, ...]) -> bool:
        return tuple(str(part) for part in path) in wanted

    return is_sensitive


def _has_placeholder(node: Any) -> bool:
    if isinstance(node, str):
        return PLACEHOLDER_MARK in node
    if isinstance(node, dict):
        return any(_has_placeholder(k) or _has_placeholder(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_has_placeholder(v) for v in node)
    return False


def _restore(node: Any, secrets: Mapping[str, str]) -> Any:
    """Put each secret back where the redactor left its placeholder (keys and values, nested)."""
    if not secrets:
        return node
    if isinstance(node, str):
        if PLACEHOLDER_MARK in node:
            for placeholder, value in secrets.items():
                node = node.replace(placeholder, value)
        return node
    if isinstance(node, dict):
        return {_restore(k, secrets): _restore(v, secrets) for k, v in node.items()}
    if isinstance(node, list):
        return [_restore(v, secrets) for v in node]
    return node
