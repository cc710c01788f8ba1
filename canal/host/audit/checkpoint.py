"""Checkpoints: a signed head of the log (seq, hash) that an operator stores elsewhere.

Verifying against a checkpoint catches what a hash chain alone cannot: records cut from the tail.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.core.next import act
from canal.host.audit.errors import AUDIT_CHECKPOINT_INVALID
from canal.host.audit.record import canonical, sign
from canal.host.audit.verify import Head

CHECKPOINT_KIND = "canal-audit-checkpoint"


class Checkpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = CHECKPOINT_KIND
    v: int = 1
    log: str  # the log's path when the checkpoint was made, for people reading it
    key_id: str
    seq: int
    hash: str
    ts: str
    mac: str = ""

    @property
    def head(self) -> Head:
        return Head(self.seq, self.hash)

    def text(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _payload(cp: Checkpoint) -> bytes:
    return canonical({k: v for k, v in cp.model_dump().items() if k != "mac"})


def make_checkpoint(head: Head, log: str, key: bytes, key_id: str, ts: str) -> Checkpoint:
    unsigned = Checkpoint(log=log, key_id=key_id, seq=head.seq, hash=head.hash, ts=ts)
    return unsigned.model_copy(update={"mac": sign(key, _payload(unsigned))})


def read_checkpoint(text: str, key: bytes, key_id: str) -> Checkpoint:
    """Parse and authenticate a checkpoint; refuse one this host did not sign."""
    hint = "make a fresh one"
    fresh = act("audit.checkpoint")
    try:
        raw: Any = json.loads(text)
        cp = Checkpoint.model_validate(raw)
    except (json.JSONDecodeError, ValidationError) as exc:
        msg = f"not a Canal audit checkpoint: {exc.__class__.__name__}"
        raise AUDIT_CHECKPOINT_INVALID(msg, hint=hint, next=fresh) from exc
    if cp.kind != CHECKPOINT_KIND or cp.v != 1:
        msg = f"unknown checkpoint kind {cp.kind!r} version {cp.v}"
        raise AUDIT_CHECKPOINT_INVALID(msg, hint=hint, next=fresh)
    if cp.key_id != key_id or not hmac.compare_digest(sign(key, _payload(cp)), cp.mac):
        msg = f"the checkpoint's signature does not verify with this host's key {key_id!r}"
        raise AUDIT_CHECKPOINT_INVALID(msg, hint=hint, next=fresh, details={"checkpoint_key_id": cp.key_id})
    return cp
