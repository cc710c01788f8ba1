"""``Canal.keys``: the key-encryption keys that seal state and sign records (``host/keys/``). Never their
material.

``list`` only reads (``KeysAPI``: through the server too). ``rotate`` and ``retire`` are in-process only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict

from canal.core.next import act
from canal.host.keys import KEY_RETIRE_REFUSED, KeyInfo
from canal.host.sealed import SealedError, SealedStore
from canal.runtime.services import Services, sealed_store_for


class KeyList(BaseModel):
    """Where the keys come from (``env``: ``CANAL_KEY``; else the key ring at ``ring_path``) and each
    key's id and state (primary, decrypt-only, retired)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    ring_path: str
    keys: list[KeyInfo]


class Resealed(BaseModel):
    """A state file that could not be re-sealed under the new key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str
    root: str
    code: str
    message: str


class KeyRotation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    primary: str
    previous: str
    resealed: int
    failed: list[Resealed]

    def to_json(self) -> dict[str, Any]:
        return {"status": "partial" if self.failed else "ok", **self.model_dump()}


class Keys:
    def __init__(self, services: Services) -> None:
        self._services = services

    def list(self) -> KeyList:
        ks = self._services.keys
        return KeyList(source=ks.source, ring_path=str(ks.ring_path), keys=ks.keys())

    # -- in-process only ------------------------------------------------------------------------
    def rotate(self) -> KeyRotation:
        """Make a new primary key and re-seal every state file (of every project) under it; the old keys
        stay decrypt-only."""
        ks = self._services.keys
        old = ks.primary_id
        new = ks.rotate()
        resealed, failed = 0, []
        for store in self._stores():
            for doc_id in store.ids():
                try:
                    store.reseal(doc_id)
                    resealed += 1
                except SealedError as exc:
                    failed.append(Resealed(doc_id=doc_id, root=str(store.root), code=exc.code,
                                           message=exc.message))
        return KeyRotation(primary=new.id, previous=old, resealed=resealed, failed=failed)

    def retire(self, key_id: str) -> KeyInfo:
        """Destroy a decrypt-only key; refused while any state file is still sealed under it."""
        users = [f"{store.root}/{d}" for store in self._stores()
                 for d in store.ids() if _key_of(store, d) in (key_id, None)]  # unreadable: assume in use
        if users:
            msg = f"{len(users)} state file(s) are still sealed under {key_id}: {', '.join(users[:5])}"
            raise KEY_RETIRE_REFUSED(msg, next=act("key.rotate", "re-seals them; then retire again"),
                                     details={"files": users})
        return self._services.keys.retire(key_id)

    def _stores(self) -> Iterator[SealedStore]:
        """The sealed store of this project and of every other project under the state root."""
        ks = self._services.keys
        return (sealed_store_for(state_dir, ks) for state_dir in self._services.all_state_dirs())


def _key_of(store: SealedStore, doc_id: str) -> str | None:
    try:
        return str(store.envelope(doc_id).key_id)
    except SealedError:
        return None
