"""Errors of the workflow engine. Each class has a stable UPPER_SNAKE ``code`` and an exit code."""

from __future__ import annotations

from canal.core.errors import CanalError, register


class WorkflowError(CanalError):
    code = "WORKFLOW_ERROR"
    exit_code = 2


WORKFLOW_NOT_FOUND = register(WorkflowError, "WORKFLOW_NOT_FOUND", "Workflow not found.")

WORKFLOW_INVALID = register(WorkflowError, "WORKFLOW_INVALID", """
    The definition failed validation; ``details["problems"]`` lists each ``{file, line, message}``.
    """)

WORKFLOW_EXISTS = register(WorkflowError, "WORKFLOW_EXISTS", "Workflow exists.")

STEP_NOT_FOUND = register(WorkflowError, "STEP_NOT_FOUND", "Step not found.")

RUN_NOT_FOUND = register(WorkflowError, "RUN_NOT_FOUND", """
    Raised by a ``RunStore`` when no run has that id.
    """)

RUN_CONFLICT = register(WorkflowError, "RUN_CONFLICT", """
    Raised by a ``RunStore`` when the stored revision is not the expected one (another writer won).
    """, exit_code=125)

RUN_BUSY = register(WorkflowError, "RUN_BUSY", "Run busy.", exit_code=125)

RUN_FINISHED = register(WorkflowError, "RUN_FINISHED", "Run finished.")

RUN_NEEDS_ATTENTION = register(WorkflowError, "RUN_NEEDS_ATTENTION", "Run needs attention.")

GATE_REJECTED = register(WorkflowError, "GATE_REJECTED", """
    Gate data failed validation. ``details``: ``missing`` [{field, desc}], ``invalid``, ``dropped``.
    """)


CONFIRMATION_PENDING = register(WorkflowError, "CONFIRMATION_REQUIRED", """
    A command, tool call or workflow step needs confirming: nothing ran; repeat it with the token given.
    """, exit_code=120)


CONFIRM_TOKEN_MISMATCH = register(WorkflowError, "APPROVAL_INVALID", """
    The confirmation token given to advance is not the one this step asked for.
    """, exit_code=122)


STEP_FAILED = register(WorkflowError, "STEP_FAILED", """
    A run stopped because a step ran and failed (non-zero exit): the code in the run's failure.
    """, exit_code=1)

STEP_ERROR = register(WorkflowError, "STEP_ERROR", """
    A run stopped because a step could not run, or its result could not be read, and no more precise
    code applies: the code in the run's failure.
    """, exit_code=1)

CONFIRMATION_UNATTENDED = register(WorkflowError, "CONFIRMATION_UNATTENDED", """
    A step needs confirmation, and the run is unattended (no one can give it): the run fails.
    """, exit_code=1)


class TemplateError(WorkflowError):
    """A template could not be resolved (missing reference, wrong type for an argv element)."""

    code = "TEMPLATE_UNRESOLVED"
