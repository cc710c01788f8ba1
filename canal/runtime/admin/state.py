"""``Canal.state``: the project's sealed state files (workflow runs and other host state, ``host/sealed/``).

``show`` (sealed values masked) and ``verify`` only read (``StateAPI``: through the server too). Revealing
the sealed values (``show(..., reveal=True)``, recorded in the audit log) is in-process only.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from canal.host.audit.log import AuditLog
from canal.host.sealed import SealedError, SealedStore
from canal.host.sealed.crypto import PREFIX
from canal.runtime.services import Services

MASK = "[sealed]"  # how a sealed value shows; not the exact-secret mask (canal.core.mask)


def masked(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: masked(v) for k, v in node.items()}
    if isinstance(node, list):
        return [masked(v) for v in node]
    if isinstance(node, str) and node.startswith(PREFIX):
        return MASK
    return node


class StateDoc(BaseModel):
    """A state document's readable structure (``doc``: sealed values as ``[sealed]`` unless revealed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str
    revision: int
    key_id: str
    written_at: str
    sealed: list[str]  # JSON pointers of the sealed values
    doc: Any


class StateCheck(BaseModel):
    """One document's check: ``revision`` when ok, the refusal's ``code``, ``message`` and ``hint`` else."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str
    status: Literal["ok", "failed"]
    revision: int | None = None
    code: str | None = None
    message: str | None = None
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class StateReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    root: str
    documents: list[StateCheck]

    @property
    def failed(self) -> list[StateCheck]:
        return [d for d in self.documents if d.status != "ok"]


class State:
    def __init__(self, services: Services) -> None:
        self._services = services

    def show(self, doc_id: str, *, reveal: bool = False) -> StateDoc:
        """The document, verified before anything is shown; ``reveal`` (in-process only) decrypts its
        sealed values and records that in the audit log."""
        store = self._services.sealed
        doc, revision = store.load(doc_id)
        env = store.envelope(doc_id)
        if reveal and isinstance(store.ledger, AuditLog):
            store.ledger.append("state.reveal", {"doc": doc_id, "revision": revision}, actor="user")
        return StateDoc(doc_id=doc_id, revision=revision, key_id=env.key_id, written_at=env.written_at,
                        sealed=env.sealed, doc=doc if reveal else masked(env.doc))

    def verify(self) -> StateReport:
        """Check every state file of the project (keys, ciphertexts, integrity, revisions), and that no
        document the ledger recorded is gone (``SEALED_DELETED``)."""
        store = self._services.sealed
        known = store.ledger.known_documents() if isinstance(store.ledger, AuditLog) else []
        checks = [_verify_one(store, doc_id) for doc_id in sorted({*store.ids(), *known})]
        return StateReport(root=str(store.root), documents=checks)


def _verify_one(store: SealedStore, doc_id: str) -> StateCheck:
    try:
        _, revision = store.load(doc_id)
    except SealedError as exc:
        return StateCheck(doc_id=doc_id, status="failed", code=exc.code, message=exc.message, hint=exc.hint)
    return StateCheck(doc_id=doc_id, status="ok", revision=revision)
