"""Confirmation tokens bound to one exact command, and human approval of them."""

from canal.host.approvals.errors import (
    ApprovalDeniedError,
    ApprovalError,
    ApprovalExpiredError,
    ApprovalForgedError,
    ApprovalMismatchError,
    ApprovalPendingError,
    ApprovalReusedError,
    ApprovalStoreError,
    ApproverIsAgentError,
    ApproversNotConfiguredError,
    ApproverUnknownError,
    ApproverUnverifiedError,
    SignatureInvalidError,
    SignatureReplayedError,
    SignerNotAllowedError,
)
from canal.host.approvals.identities import ApprovalsSettings, ApproverSpec, ConsoleSettings
from canal.host.approvals.model import Approval, Approver, DecisionSummary, Pending
from canal.host.approvals.service import ApprovalService

__all__ = [
    "Approval",
    "ApprovalDeniedError",
    "ApprovalError",
    "ApprovalExpiredError",
    "ApprovalForgedError",
    "ApprovalMismatchError",
    "ApprovalPendingError",
    "ApprovalReusedError",
    "ApprovalService",
    "ApprovalStoreError",
    "ApprovalsSettings",
    "Approver",
    "ApproverIsAgentError",
    "ApproverSpec",
    "ApproverUnknownError",
    "ApproverUnverifiedError",
    "ApproversNotConfiguredError",
    "ConsoleSettings",
    "DecisionSummary",
    "Pending",
    "SignatureInvalidError",
    "SignatureReplayedError",
    "SignerNotAllowedError",
]
