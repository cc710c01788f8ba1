"""Confirmation tokens bound to one exact command, and human approval of them."""

from runtime.approvals.approvers import ApproverRegistry, from_terminal
from runtime.approvals.errors import (
    ApprovalError,
    ApprovalExpiredError,
    ApprovalForgedError,
    ApprovalMismatchError,
    ApprovalPendingError,
    ApprovalReusedError,
    ApprovalStoreError,
    ApproverUnverifiedError,
)
from runtime.approvals.model import Approval, Approver, DecisionSummary, Pending
from runtime.approvals.service import ApprovalService

__all__ = [
    "Approval",
    "ApprovalError",
    "ApprovalExpiredError",
    "ApprovalForgedError",
    "ApprovalMismatchError",
    "ApprovalPendingError",
    "ApprovalReusedError",
    "ApprovalService",
    "ApprovalStoreError",
    "Approver",
    "ApproverRegistry",
    "ApproverUnverifiedError",
    "DecisionSummary",
    "Pending",
    "from_terminal",
]
