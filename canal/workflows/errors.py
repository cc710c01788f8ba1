"""Errors of the workflow engine. Each class has a stable UPPER_SNAKE ``code`` and an exit code."""

from __future__ import annotations

from typing import ClassVar

from canal.core.errors import CanalError


class WorkflowError(CanalError):
    code: ClassVar[str] = "WORKFLOW_ERROR"
    exit_code: ClassVar[int] = 2


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
    """A command, tool call or workflow step needs confirming: nothing ran; repeat it with the token given."""

    code = "CONFIRMATION_REQUIRED"
    exit_code = 120


class ConfirmTokenMismatchError(WorkflowError):
    code = "APPROVAL_INVALID"
    exit_code = 122


class StepFailedError(WorkflowError):
    """A run stopped because a step ran and failed (non-zero exit): the code in the run's failure."""

    code = "STEP_FAILED"
    exit_code = 1


class StepErrorError(WorkflowError):
    """A run stopped because a step could not run, or its result could not be read, and no more precise
    code applies: the code in the run's failure."""

    code = "STEP_ERROR"
    exit_code = 1


class ConfirmationUnattendedError(WorkflowError):
    """A step needs confirmation, and the run is unattended (no one can give it): the run fails."""

    code = "CONFIRMATION_UNATTENDED"
    exit_code = 1


class TemplateError(WorkflowError):
    """A template could not be resolved (missing reference, wrong type for an argv element)."""

    code = "TEMPLATE_UNRESOLVED"
