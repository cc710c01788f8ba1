"""Pending confirmations on disk: one HMAC-signed JSON file (0600) per token, under one lock.

A record keeps the command only in redacted form, plus an HMAC of the exact command to bind the token
to it. Every state change (approved, consumed) rewrites the file atomically while the folder lock is
held, so two redeems of the same token cannot both win.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.core.fsutil import FILE_MODE, atomic_write, private_dir
from canal.host.approvals.errors import APPROVAL_STORE_FAILED, ApprovalForgedError

Status = Literal["pending", "approved", "denied", "consumed"]
Mode = Literal["agent", "human"]
# os-user, ssh and passkey are approver identities (approvals.approvers); tty and approver-key are read in
# records written before them; elicitation is the MCP client's form, for projects without approvers.
How = Literal["os-user", "ssh", "passkey", "tty", "approver-key", "token", "elicitation"]


class ApproverInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str  # the approver's name (approvals.approvers), or the agent for agent-mode tokens
    how: How
    key_name: str | None = None
    at: float
    evidence: dict[str, Any] = {}  # the proof: peer uid, SSH signature and message, passkey credential
    reason: str = ""  # a denial's reason, which the agent reads


class ApprovalRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = 1
    token_id: str
    status: Status
    mode: Mode
    command: str  # redacted, for people; the binding is command_mac
    command_mac: str
    sandbox: str
    cwd: str
    policy_hash: str
    rule_ids: list[str]
    reason: str
    created_at: float
    expires_at: float
    approved_by: ApproverInfo | None = None
    consumed_at: float | None = None
    project: str = ""  # the project id (audit.opened names the same)
    mac: str = ""


def _canonical(rec: ApprovalRecord) -> bytes:
    body = rec.model_dump(exclude={"mac"})
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class ApprovalStore:
    def __init__(self, folder: Path, key: bytes) -> None:
        self.folder = folder
        self._key = key

    def _sign(self, rec: ApprovalRecord) -> str:
        return hmac.new(self._key, b"canal-approval:" + _canonical(rec), hashlib.sha256).hexdigest()

    def path(self, token_id: str) -> Path:
        return self.folder / f"{token_id}.json"

    def save(self, rec: ApprovalRecord) -> None:
        signed = rec.model_copy(update={"mac": self._sign(rec)})
        try:
            atomic_write(self.path(rec.token_id), signed.model_dump_json().encode())
        except OSError as exc:
            msg = f"could not write the approval record {self.path(rec.token_id)}: {exc.strerror}"
            raise APPROVAL_STORE_FAILED(msg, hint=f"fix permissions or free space in {self.folder}") from exc

    def load(self, token_id: str) -> ApprovalRecord | None:
        try:
            raw = self.path(token_id).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            msg = f"could not read the approval record for {token_id}: {exc.strerror}"
            raise APPROVAL_STORE_FAILED(msg, hint=f"check permissions on {self.folder}") from exc
        return self._verified(token_id, raw)

    def _verified(self, token_id: str, raw: bytes) -> ApprovalRecord:
        hint = "run the command again without --confirm to get a fresh token"
        try:
            rec = ApprovalRecord.model_validate_json(raw)
        except ValidationError as exc:
            msg = f"the stored record of token {token_id} is unreadable; it was not written by Canal"
            raise ApprovalForgedError(msg, hint=hint) from exc
        if rec.token_id != token_id or not hmac.compare_digest(self._sign(rec), rec.mac):
            msg = f"the stored record of token {token_id} fails its signature check (edited or forged)"
            raise ApprovalForgedError(msg, hint=hint)
        return rec

    def all(self) -> Iterator[ApprovalRecord]:
        """Every record that verifies; unreadable or forged ones are skipped."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.json")):
            with contextlib.suppress(ApprovalForgedError, OSError):
                yield self._verified(path.stem, path.read_bytes())

    def remove(self, token_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(token_id).unlink()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        try:
            private_dir(self.folder)
            fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                         FILE_MODE)
        except OSError as exc:
            msg = f"could not open the approvals folder {self.folder}: {exc.strerror}"
            raise APPROVAL_STORE_FAILED(msg, hint=f"fix permissions on {self.folder.parent}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
