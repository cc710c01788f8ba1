"""Confirmation tokens for commands the policy says to confirm: mint, approve (by a person), redeem once.

A token is valid only for exactly the command, sandbox, working directory and policy hash it was minted
for, until it expires, and once. In ``human`` mode it is only redeemable after ``approve`` (the
``canal approve TOKEN`` command, run by a person). Records are HMAC-signed with a host key, so an agent
can neither mint a token nor approve one by editing a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from canal.core.display import visible
from canal.core.errors import CanalError
from canal.core.next import act
from canal.host.approvals import token as tokens
from canal.host.approvals.errors import (
    APPROVAL_DENIED,
    APPROVAL_EXPIRED,
    APPROVAL_MISMATCH,
    APPROVAL_PENDING,
    APPROVAL_REUSED,
    APPROVER_UNVERIFIED,
    SIGNATURE_REPLAYED,
    ApprovalError,
    ApprovalForgedError,
)
from canal.host.approvals.identities import STRONG_METHODS, ApprovalsSettings
from canal.host.approvals.model import Approval, Approver, DecisionSummary, Pending
from canal.host.approvals.sshsig import approval_message, command_digest
from canal.host.approvals.store import ApprovalRecord, ApprovalStore, ApproverInfo, Mode
from canal.host.ports import AuditSink, Redactor, no_redaction

PURGE_AFTER_S = 24 * 3600  # keep used and expired records a day, so a reuse says REUSED, not FORGED
PURGE_EVERY_S = 3600


class ApprovalService:
    def __init__(self, state_dir: Path, key: bytes, *, ttl_s: float = 600, mode: Mode = "agent",
                 clock: Callable[[], float] = time.time, redact: Redactor = no_redaction,
                 audit: AuditSink | None = None, settings: ApprovalsSettings | None = None,
                 project_id: str = "") -> None:
        self._key = key
        self.settings = settings or ApprovalsSettings()
        self.project_id = project_id
        self._ttl = ttl_s
        self._mode = mode
        self._clock = clock
        self._redact = redact
        self._audit = audit
        self.store = ApprovalStore(state_dir / "approvals", key)

    def request(self, command: str, sandbox: str, cwd: str, policy_hash: str,
                decision_summary: DecisionSummary, *, display: str | None = None) -> Pending:
        """Mint a token for exactly this command; nothing is approved yet.

        ``display`` is the text stored and shown for it (default: the command, redacted); a caller
        that knows exact secrets in the command passes it with them masked.
        """
        token, token_id = tokens.mint(self._key)
        now = self._clock()
        rec = ApprovalRecord(token_id=token_id, status="pending", mode=self._mode,
                             command=self._redact(command if display is None else display),
                             command_mac=self._command_mac(command),
                             sandbox=sandbox, cwd=cwd, policy_hash=policy_hash,
                             rule_ids=list(decision_summary.rule_ids), reason=decision_summary.reason,
                             created_at=now, expires_at=now + self._ttl, project=self.project_id)
        with self.store.locked():
            self._purge(now)
            self.store.save(rec)
        self._log("approval.requested", rec, mode=rec.mode, expires_at=rec.expires_at)
        return Pending.of(token, rec, now)

    def approve(self, token: str, approver: Approver) -> Pending:
        """A person approves a pending token (human mode). Approving twice is harmless."""
        return self._decide(token, approver, "approve", "")

    def deny(self, token: str, approver: Approver, reason: str) -> Pending:
        """A person refuses the command; the agent reads ``reason`` when it re-runs with the token."""
        return self._decide(token, approver, "deny", reason.strip()[:500] or "no reason given")

    def message(self, token: str, decision: str, extra: Mapping[str, str | int] | None = None) -> bytes:
        """The exact text an approver signs with their SSH key to ``decision`` (approve|deny) ``token``;
        ``extra`` lines follow (the console adds the reason's digest and a one-time nonce)."""
        rec = self.show(token)
        return approval_message({"decision": decision, "token": rec.token,
                                 "project": rec.project or self.project_id,
                                 "command-sha256": command_digest(rec.command),
                                 "expires": int(rec.expires_at), **(extra or {})})

    def refused(self, error: CanalError, **details: Any) -> None:
        """Record a refused approval attempt (who tried, how, and the code it got)."""
        if self._audit is not None:
            self._audit.append("approval.refused", {"code": error.code, "message": error.message, **details},
                               actor=str(details.get("actor") or "canal"))

    def _decide(self, token: str, approver: Approver, decision: str, reason: str) -> Pending:
        token_id = tokens.parse(self._key, token)
        self._require_identity(approver)
        with self.store.locked():
            rec = self._usable(token, token_id)
            self._not_replayed(token, rec, approver)
            if rec.status == "denied":
                raise _denied(token, rec)
            if rec.status == "pending" or decision == "deny":
                info = ApproverInfo(user=approver.user, how=approver.how, key_name=approver.key_name,
                                    at=self._clock(), evidence=dict(approver.evidence), reason=reason)
                status = "approved" if decision == "approve" else "denied"
                rec = rec.model_copy(update={"status": status, "approved_by": info})
                self.store.save(rec)
                extra = {"reason": reason} if decision == "deny" else {}
                self._log(f"approval.{status}", rec, approver=approver.user, how=approver.how,
                          key_name=approver.key_name, evidence=dict(approver.evidence), **extra)
        return Pending.of(token, rec, self._clock())

    def _require_identity(self, approver: Approver) -> None:
        """With approvers configured, only their methods count (never a terminal or a client's form)."""
        if self.settings.approvers and approver.how not in STRONG_METHODS:
            msg = (f"{approver.how} is not a way to approve in this project: its approvers prove who they "
                   "are with another OS user, an SSH signature or a passkey")
            raise APPROVER_UNVERIFIED(msg, hint="see docs/approvals.md")

    def _not_replayed(self, token: str, rec: ApprovalRecord, approver: Approver) -> None:
        sig = approver.evidence.get("signature_sha256")
        before = rec.approved_by.evidence.get("signature_sha256") if rec.approved_by is not None else None
        if sig is not None and sig == before:
            msg = f"this signature was already used for {token}; a signature counts once"
            raise SIGNATURE_REPLAYED(msg, hint="nothing to do: the decision is recorded",
                                         details={"token": token})

    def show(self, token: str) -> Pending:
        """What a usable token confirms (for a person about to approve it)."""
        token_id = tokens.parse(self._key, token)
        with self.store.locked():
            rec = self._usable(token, token_id)
        return Pending.of(token, rec, self._clock())

    def redeem(self, token: str, command: str, sandbox: str, cwd: str, policy_hash: str) -> Approval:
        """Consume the token for exactly this command, or raise why it cannot be used."""
        token_id = tokens.parse(self._key, token)
        with self.store.locked():
            rec = self._usable(token, token_id)
            self._check_binding(token, rec, command, sandbox, cwd, policy_hash)
            if rec.status == "denied":
                raise _denied(token, rec)
            if "human" in (rec.mode, self._mode) and rec.approved_by is None:
                msg = f"token {token} waits for a person's approval; nothing was run"
                raise APPROVAL_PENDING(msg, hint="ask a person to approve it",
                                           next=act("approve", "then repeat the same call with its token",
                                                    token=token),
                                           details={"token": token, "expires_at": rec.expires_at})
            now = self._clock()
            rec = rec.model_copy(update={"status": "consumed", "consumed_at": now})
            self.store.save(rec)
        self._log("approval.redeemed", rec)
        return Approval.of(token, rec)

    def pending(self) -> list[Pending]:
        """Tokens not yet used and not expired, oldest first."""
        now = self._clock()
        live = [r for r in self.store.all() if r.status not in ("consumed", "denied") and r.expires_at > now]
        return [Pending.of(tokens.token_for(self._key, r.token_id), r, now)
                for r in sorted(live, key=lambda r: r.created_at)]

    def _usable(self, token: str, token_id: str) -> ApprovalRecord:
        rec = self.store.load(token_id)
        fresh = act("retry", fresh_token=True)
        if rec is None:
            msg = f"token {token} is unknown here (never issued, or expired more than a day ago)"
            raise ApprovalForgedError(msg, next=fresh, details={"token": token})
        if rec.status == "consumed":
            msg = f"token {token} was already used; a token confirms one run only"
            raise APPROVAL_REUSED(msg, next=fresh, details={"token": token, "used_at": rec.consumed_at})
        if self._clock() >= rec.expires_at:
            msg = f"token {token} expired; confirmations last {round(rec.expires_at - rec.created_at)} s"
            details = {"token": token, "expired_at": rec.expires_at}
            raise APPROVAL_EXPIRED(msg, next=fresh, details=details)
        return rec

    def _check_binding(self, token: str, rec: ApprovalRecord, command: str, sandbox: str, cwd: str,
                       policy_hash: str) -> None:
        differs = [name for name, ok in (
            ("command", hmac.compare_digest(rec.command_mac, self._command_mac(command))),
            ("sandbox", rec.sandbox == sandbox), ("cwd", rec.cwd == cwd),
            ("policy_hash", rec.policy_hash == policy_hash)) if not ok]
        if differs:
            msg = (f"token {token} was issued for another {', '.join(differs)} "
                   f"(it confirms: {visible(rec.command)} in sandbox {rec.sandbox}, cwd {visible(rec.cwd)}); "
                   "nothing was run")
            raise APPROVAL_MISMATCH(msg, hint="for this command, its own token",
                                        next=act("retry", fresh_token=True),
                                        details={"token": token, "differs": differs})

    def _command_mac(self, command: str) -> str:
        return hmac.new(self._key, b"canal-command:" + command.encode(), hashlib.sha256).hexdigest()

    def _purge(self, now: float) -> None:
        """Drop long-dead records, at most once an hour (a scan of the folder costs per record)."""
        marker = self.store.folder / ".purged"
        try:
            if now - marker.stat().st_mtime < PURGE_EVERY_S:
                return
        except FileNotFoundError:
            pass
        with contextlib.suppress(OSError):
            marker.touch(mode=0o600)
            os.utime(marker, (now, now))
        for rec in list(self.store.all()):
            if rec.expires_at + PURGE_AFTER_S < now:
                self.store.remove(rec.token_id)

    def _log(self, event: str, rec: ApprovalRecord, **extra: Any) -> None:
        if self._audit is not None:
            self._audit.append(event, {"token_id": rec.token_id, "command": rec.command,
                                       "sandbox": rec.sandbox, "cwd": rec.cwd, "rule_ids": rec.rule_ids,
                                       **extra}, actor=extra.get("approver") or "canal")


def _denied(token: str, rec: ApprovalRecord) -> ApprovalError:
    by = rec.approved_by
    who = "a person" if by is None else f"{by.user} ({by.how})"
    reason = "" if by is None else by.reason
    msg = f"{who} denied {rec.command!r}: {reason}. Nothing was run."
    return APPROVAL_DENIED(msg, hint="do not retry it; take the reason into account or ask the person",
                               details={"token": token, "denied_by": who, "reason": reason})
