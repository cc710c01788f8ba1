"""Background tasks: commands that run in a sandbox while the session goes on (docs/tasks.md)."""

from canal.runtime.tasks.errors import (
           TASK_ALREADY_ENDED,
           TASK_LIMIT_REACHED,
           TASK_NOT_FOUND,
           TASKS_NEED_SERVER,
           TaskError,
)
from canal.runtime.tasks.facade import LogPiece, Tasks, TaskStart
from canal.runtime.tasks.manager import TaskManager
from canal.runtime.tasks.models import TaskRecord, TaskState
from canal.runtime.tasks.view import TaskView

__all__ = [
           "TASKS_NEED_SERVER",
           "TASK_ALREADY_ENDED",
           "TASK_LIMIT_REACHED",
           "TASK_NOT_FOUND",
           "LogPiece",
           "TaskError",
           "TaskManager",
           "TaskRecord",
           "TaskStart",
           "TaskState",
           "TaskView",
           "Tasks",
]
