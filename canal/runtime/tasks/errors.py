"""Errors of background tasks and forwarded ports."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class TaskError(CanalError):
    code = "TASK_ERROR"


TASK_NOT_FOUND = register(TaskError, "TASK_NOT_FOUND", """
    No task of this project has that id (it may belong to another project).
    """, exit_code=ExitCode.USAGE)

TASK_NAME_INVALID = register(TaskError, "TASK_NAME_INVALID", """
    A task name is a letter, then letters, digits, '_', '.', '-' (at most 40 characters).
    """, exit_code=ExitCode.USAGE)

TASK_ALREADY_ENDED = register(TaskError, "TASK_ALREADY_ENDED", """
    The task has already ended: there is nothing left to cancel.
    """, exit_code=ExitCode.USAGE)

TASK_LIMIT_REACHED = register(TaskError, "TASK_LIMIT_REACHED", """
    The sandbox already runs as many tasks as canal.yaml's tasks.max_running allows.
    """)

TASKS_NEED_SERVER = register(TaskError, "TASKS_NEED_SERVER", """
    A task outlives the call that started it, so it lives in the Canal server, which this call
    does not use (CANAL_NO_SERVER=1).
    """, exit_code=ExitCode.USAGE)


class TaskWaitTimeout(TaskError):
    """``canal task wait --timeout`` ran out; the task is still running."""

    code = "TASK_WAIT_TIMEOUT"
    exit_code = ExitCode.TIMEOUT
