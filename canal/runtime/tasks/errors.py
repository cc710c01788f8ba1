"""Errors of background tasks and forwarded ports."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class TaskError(CanalError):
    code = "TASK_ERROR"


class TaskNotFound(TaskError):
    """No task of this project has that id (it may belong to another project)."""

    code = "TASK_NOT_FOUND"
    exit_code = ExitCode.USAGE


class TaskNameInvalid(TaskError):
    """A task name is a letter, then letters, digits, '_', '.', '-' (at most 40 characters)."""

    code = "TASK_NAME_INVALID"
    exit_code = ExitCode.USAGE


class TaskEnded(TaskError):
    """The task has already ended: there is nothing left to cancel."""

    code = "TASK_ALREADY_ENDED"
    exit_code = ExitCode.USAGE


class TaskLimit(TaskError):
    """The sandbox already runs as many tasks as canal.yaml's tasks.max_running allows."""

    code = "TASK_LIMIT_REACHED"


class TasksNeedServer(TaskError):
    """A task outlives the call that started it, so it lives in the Canal server, which this call
    does not use (CANAL_NO_SERVER=1)."""

    code = "TASKS_NEED_SERVER"
    exit_code = ExitCode.USAGE


class TaskWaitTimeout(TaskError):
    """``canal task wait --timeout`` ran out; the task is still running."""

    code = "TASK_WAIT_TIMEOUT"
    exit_code = ExitCode.TIMEOUT
