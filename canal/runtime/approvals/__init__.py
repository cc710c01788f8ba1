"""Confirmation tokens bound to one exact command, and human approval of them."""

from canal.runtime.approvals.errors import (
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
from canal.runtime.approvals.identities import ApprovalsSettings, ApproverSpec, ConsoleSettings
from canal.runtime.approvals.model import Approval, Approver, DecisionSummary, Pending
from canal.runtime.approvals.service import ApprovalService

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
