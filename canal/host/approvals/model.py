"""Value objects the approval service hands out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from canal.host.approvals.store import ApprovalRecord, How


@dataclass(frozen=True)
class DecisionSummary:
    """What the policy said, kept with the token so a person sees why it asks."""

    rule_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Approver:
    """A person who proved who they are: ``user`` is their approver name, ``how`` the method."""

    user: str
    how: How
    key_name: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Pending:
    token: str
    status: str
    mode: str
    command: str  # redacted
    sandbox: str
    cwd: str
    rule_ids: tuple[str, ...]
    reason: str
    created_at: float
    expires_at: float
    age_s: float
    approved_by: str | None
    project: str = ""
    denied_reason: str = ""

    @property
    def needs_human(self) -> bool:
        return self.mode == "human" and self.approved_by is None

    @classmethod
    def of(cls, token: str, rec: ApprovalRecord, now: float) -> Pending:
        by = rec.approved_by
        return cls(token=token, status=rec.status, mode=rec.mode, command=rec.command, sandbox=rec.sandbox,
                   cwd=rec.cwd, rule_ids=tuple(rec.rule_ids), reason=rec.reason, created_at=rec.created_at,
                   expires_at=rec.expires_at, age_s=max(0.0, now - rec.created_at),
                   approved_by=None if by is None else f"{by.user} ({by.how})", project=rec.project,
                   denied_reason=by.reason if by is not None and rec.status == "denied" else "")

    def to_json(self) -> dict[str, Any]:
        return {"token": self.token, "status": self.status, "mode": self.mode, "command": self.command,
                "sandbox": self.sandbox, "cwd": self.cwd, "rule_ids": list(self.rule_ids),
                "reason": self.reason, "created_at": self.created_at, "expires_at": self.expires_at,
                "age_s": round(self.age_s, 1), "approved_by": self.approved_by,
                "project": self.project, "denied_reason": self.denied_reason}


@dataclass(frozen=True)
class Approval:
    """A redeemed token: the command may run; ``approver`` goes into the audit record."""

    token: str
    approver: str
    how: How
    approved_at: float | None
    command: str  # redacted
    sandbox: str
    cwd: str
    policy_hash: str
    rule_ids: tuple[str, ...]

    @classmethod
    def of(cls, token: str, rec: ApprovalRecord) -> Approval:
        by = rec.approved_by
        return cls(token=token, approver="agent" if by is None else by.user,
                   how="token" if by is None else by.how, approved_at=None if by is None else by.at,
                   command=rec.command, sandbox=rec.sandbox, cwd=rec.cwd, policy_hash=rec.policy_hash,
                   rule_ids=tuple(rec.rule_ids))
