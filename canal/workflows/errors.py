"""Errors of the workflow engine. Each class has a stable UPPER_SNAKE ``code`` and an exit code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar


class WorkflowError(Exception):
    code: ClassVar[str] = "WORKFLOW_ERROR"
    exit_code: ClassVar[int] = 2

    def __init__(self, message: str, *, hint: str = "", details: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = dict(details or {})


class WorkflowNotFoundError(WorkflowError):
    code = "WORKFLOW_NOT_FOUND"


class WorkflowInvalidError(WorkflowError):
    """The definition failed validation; ``details["problems"]`` lists each ``{file, line, message}``."""

    code = "WORKFLOW_INVALID"


class WorkflowExistsError(WorkflowError):
    code = "WORKFLOW_EXISTS"


class StepNotFoundError(WorkflowError):
    code = "STEP_NOT_FOUND"


class RunNotFoundError(WorkflowError):
    """Raised by a ``RunStore`` when no run has that id."""

    code = "RUN_NOT_FOUND"


class RunConflictError(WorkflowError):
    """Raised by a ``RunStore`` when the stored revision is not the expected one (another writer won)."""

    code = "RUN_CONFLICT"
    exit_code = 125


class RunBusyError(WorkflowError):
    code = "RUN_BUSY"
    exit_code = 125


class RunFinishedError(WorkflowError):
    code = "RUN_FINISHED"


class RunNeedsAttentionError(WorkflowError):
    code = "RUN_NEEDS_ATTENTION"


class GateRejectedError(WorkflowError):
    """Gate data failed validation. ``details``: ``missing`` [{field, desc}], ``invalid``, ``dropped``."""

    code = "GATE_REJECTED"


class ConfirmationPendingError(WorkflowError):
    """The run waits at a confirmation point and the advance carried no token."""

    code = "CONFIRMATION_REQUIRED"
    exit_code = 120


class ConfirmTokenMismatchError(WorkflowError):
    code = "APPROVAL_INVALID"
    exit_code = 122


class TemplateError(WorkflowError):
    """A template could not be resolved (missing reference, wrong type for an argv element)."""

    code = "TEMPLATE_UNRESOLVED"
