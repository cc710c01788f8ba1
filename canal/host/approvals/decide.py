"""One person's decision on a token, with its proof checked first: the one path the approval door, the
CLI and the web console all take, so each refusal gets its own code and an audit record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from canal.core.next import NextAction, act
from canal.host.approvals.errors import APPROVER_UNVERIFIED, ApprovalError
from canal.host.approvals.model import Approver, Pending
from canal.host.approvals.service import ApprovalService
from canal.host.approvals.verify import by_peer_uid, by_signature

Decision = Literal["approve", "deny"]
NO_PROOF_HINT = "an approver decides it as their own OS user (naming the agent's user), or signs it"


def no_proof_next(kind: Literal["approve", "config.approve"],
                  token: str | None = None) -> tuple[NextAction, ...]:
    """The two ways a person proves who they are from a terminal: their own OS user, their SSH key."""
    return act(kind, token=token, for_user="AGENT_USER"), act(kind, token=token, ssh_key="KEY")


@dataclass(frozen=True)
class Proof:
    """What the caller saw of the person: the client's uid from the kernel, and/or an SSH signature.

    A passkey is checked by the console before it builds an ``Approver`` (``decide_as``)."""

    peer_uid: int | None = None
    signature: str | None = None


def identify(service: ApprovalService, token: str, decision: Decision, proof: Proof,
             agent_uid: int) -> Approver:
    if proof.signature:
        return by_signature(service.settings, service.message(token, decision), proof.signature)
    if proof.peer_uid is not None:
        return by_peer_uid(service.settings, proof.peer_uid, agent_uid)
    msg = "approving needs an approver's proof: a terminal alone does not count"
    raise APPROVER_UNVERIFIED(msg, hint=NO_PROOF_HINT, next=no_proof_next("approve", token))


def decide(service: ApprovalService, token: str, decision: Decision, reason: str, proof: Proof,
           agent_uid: int) -> Pending:
    """Check the proof, then record the decision; every refusal is audited (``approval.refused``)."""
    method = "ssh" if proof.signature else "os-user" if proof.peer_uid is not None else "none"
    try:
        approver = identify(service, token, decision, proof, agent_uid)
    except ApprovalError as exc:
        service.refused(exc, token=token, decision=decision, method=method, peer_uid=proof.peer_uid)
        raise
    return decide_as(service, token, decision, reason, approver, peer_uid=proof.peer_uid)


def decide_as(service: ApprovalService, token: str, decision: Decision, reason: str, approver: Approver, *,
              peer_uid: int | None = None) -> Pending:
    try:
        if decision == "approve":
            return service.approve(token, approver)
        return service.deny(token, approver, reason)
    except ApprovalError as exc:
        service.refused(exc, token=token, decision=decision, method=approver.how, approver=approver.user,
                        peer_uid=peer_uid)
        raise
