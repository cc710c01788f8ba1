"""Confirmation tokens bound to one exact command, and human approval of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from canal.core.lazy import exports

if TYPE_CHECKING:
    from canal.host.approvals.errors import (
        APPROVAL_DENIED,
        APPROVAL_EXPIRED,
        APPROVAL_MISMATCH,
        APPROVAL_PENDING,
        APPROVAL_REUSED,
        APPROVAL_STORE_FAILED,
        APPROVER_IS_AGENT,
        APPROVER_UNKNOWN,
        APPROVER_UNVERIFIED,
        APPROVERS_NOT_CONFIGURED,
        SIGNATURE_INVALID,
        SIGNATURE_REPLAYED,
        SIGNER_NOT_ALLOWED,
        ApprovalError,
        ApprovalForgedError,
    )
    from canal.host.approvals.identities import ApprovalsSettings, ApproverSpec, ConsoleSettings
    from canal.host.approvals.model import Approval, Approver, DecisionSummary, Pending
    from canal.host.approvals.service import ApprovalService

__all__ = [
    "APPROVAL_DENIED",
    "APPROVAL_EXPIRED",
    "APPROVAL_MISMATCH",
    "APPROVAL_PENDING",
    "APPROVAL_REUSED",
    "APPROVAL_STORE_FAILED",
    "APPROVERS_NOT_CONFIGURED",
    "APPROVER_IS_AGENT",
    "APPROVER_UNKNOWN",
    "APPROVER_UNVERIFIED",
    "SIGNATURE_INVALID",
    "SIGNATURE_REPLAYED",
    "SIGNER_NOT_ALLOWED",
    "Approval",
    "ApprovalError",
    "ApprovalForgedError",
    "ApprovalService",
    "ApprovalsSettings",
    "Approver",
    "ApproverSpec",
    "ConsoleSettings",
    "DecisionSummary",
    "Pending",
]

# each name is imported from its module when first used (canal.core.lazy)
__getattr__ = exports(__name__, {
    ".errors": (
        "APPROVAL_DENIED", "APPROVAL_EXPIRED", "APPROVAL_MISMATCH", "APPROVAL_PENDING", "APPROVAL_REUSED",
        "APPROVAL_STORE_FAILED", "APPROVER_IS_AGENT", "APPROVER_UNKNOWN", "APPROVER_UNVERIFIED",
        "APPROVERS_NOT_CONFIGURED", "SIGNATURE_INVALID", "SIGNATURE_REPLAYED", "SIGNER_NOT_ALLOWED",
        "ApprovalError", "ApprovalForgedError",
    ),
    ".identities": ("ApprovalsSettings", "ApproverSpec", "ConsoleSettings"),
    ".model": ("Approval", "Approver", "DecisionSummary", "Pending"),
    ".service": ("ApprovalService",),
})
