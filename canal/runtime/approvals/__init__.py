"""Confirmation tokens bound to one exact command, and human approval of them."""

from canal.runtime.approvals.approvers import ApproverRegistry, from_terminal, identify_person
from canal.runtime.approvals.errors import (
    ApprovalError,
    ApprovalExpiredError,
    ApprovalForgedError,
    ApprovalMismatchError,
    ApprovalPendingError,
    ApprovalReusedError,
    ApprovalStoreError,
    ApproverUnverifiedError,
)
from canal.runtime.approvals.model import Approval, Approver, DecisionSummary, Pending
from canal.runtime.approvals.service import ApprovalService

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
    "identify_person",
]
