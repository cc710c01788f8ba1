"""A person approving changed trusted settings proves who they are the same ways as for a command.

The approvers that count are those of the settings approved last. While none are named (a new project),
a person at a terminal bootstraps the first settings: that holds only against an agent without a host
shell (docs/approvals.md); once approvers are named, a terminal never counts again.
"""

from __future__ import annotations

import time

from canal.core.next import act
from canal.host.approvals.decide import NO_PROOF_HINT, Proof, no_proof_next
from canal.host.approvals.errors import APPROVAL_EXPIRED, APPROVER_UNVERIFIED, ApprovalError
from canal.host.approvals.model import Approver
from canal.host.approvals.verify import by_peer_uid, by_signature
from canal.runtime.trust.service import TrustedConfig
from canal.runtime.trust.store import TrustRecord


def _identify(trust: TrustedConfig, digest: str, proof: Proof, agent_uid: int, *, expires: int | None,
              terminal_user: str | None) -> Approver:
    in_force = trust.approvers()
    if proof.signature:
        if expires is None or expires < time.time():
            msg = "the signed approval of these settings has expired (or names no expiry)"
            raise APPROVAL_EXPIRED(msg, hint="sign a fresh one",
                                       next=act("config.approve", ssh_key="KEY"))
        return by_signature(in_force, trust.message(digest, expires), proof.signature)
    if proof.peer_uid is not None:
        return by_peer_uid(in_force, proof.peer_uid, agent_uid)
    if not in_force.approvers and terminal_user is not None:
        return Approver(user=terminal_user, how="tty")
    if not in_force.approvers:  # a new project: a person at a terminal approves the first settings
        msg = ("no approvers are named yet (approvals.approvers in approved settings), so the first "
               "settings are approved by a person at a terminal, and this command has none (stdin and "
               "stdout are not a terminal)")
        raise APPROVER_UNVERIFIED(msg, hint="ask a person to run it in their own terminal",
                                      next=(act("config.approve"),))
    msg = ("approving these settings needs one of the approvers named in the approved canal.yaml: "
           "a terminal alone does not count")
    raise APPROVER_UNVERIFIED(msg, hint=NO_PROOF_HINT, next=no_proof_next("config.approve"))


def approve_config(trust: TrustedConfig, digest: str, proof: Proof, agent_uid: int, *,
                   expires: int | None = None, terminal_user: str | None = None) -> TrustRecord:
    """Check the proof against the approvers in force, then record the approval; refusals are audited."""
    try:
        approver = _identify(trust, digest, proof, agent_uid, expires=expires, terminal_user=terminal_user)
        return trust.approve(approver, digest)
    except ApprovalError as exc:
        if trust.audit is not None:
            trust.audit.append("config.refused", {"code": exc.code, "message": exc.message, "digest": digest,
                                                  "peer_uid": proof.peer_uid,
                                                  "method": "ssh" if proof.signature else "os-user"
                                                  if proof.peer_uid is not None else "none"}, actor="canal")
        raise
