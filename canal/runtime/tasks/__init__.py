"""Background tasks: commands that run in a sandbox while the session goes on (docs/tasks.md)."""

from canal.runtime.tasks.errors import TaskEnded, TaskError, TaskLimit, TaskNotFound, TasksNeedServer
from canal.runtime.tasks.facade import LogPiece, Tasks, TaskStart
from canal.runtime.tasks.manager import TaskManager
from canal.runtime.tasks.models import TaskRecord, TaskState
from canal.runtime.tasks.view import TaskView

__all__ = ["LogPiece", "TaskEnded", "TaskError", "TaskLimit", "TaskManager", "TaskNotFound", "TaskRecord",
           "TaskStart", "TaskState", "TaskView", "Tasks", "TasksNeedServer"]
