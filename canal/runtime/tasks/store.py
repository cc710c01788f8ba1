"""Task records on disk: ``<state>/tasks/<id>.json`` (0600, written atomically), newest last."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from canal.core.fsutil import atomic_write
from canal.runtime.tasks.models import TaskRecord

_ID = re.compile(r"^t-[0-9a-f]{6}$")
KEEP = 200  # ended tasks' records kept per project (the oldest go first)


def valid_id(task_id: str) -> bool:
    return bool(_ID.match(task_id))


class TaskStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, task_id: str) -> Path:
        return self.folder / f"{task_id}.json"

    def save(self, record: TaskRecord) -> None:
        atomic_write(self.path(record.id), record.model_dump_json().encode())

    def load(self, task_id: str) -> TaskRecord | None:
        if not valid_id(task_id):
            return None
        try:
            return TaskRecord.model_validate_json(self.path(task_id).read_bytes())
        except (OSError, ValidationError, ValueError):
            return None

    def all(self) -> list[TaskRecord]:
        """Every readable record, oldest first."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.glob("t-*.json"):
            record = self.load(path.stem)
            if record is not None:
                found.append(record)
        return sorted(found, key=lambda r: r.started_at)

    def prune(self) -> None:
        """Forget the oldest ended tasks past ``KEEP``."""
        ended = [r for r in self.all() if not r.running]
        for record in ended[:max(0, len(ended) - KEEP)]:
            self.path(record.id).unlink(missing_ok=True)


def owner_project(state_dirs: list[Path], task_id: str) -> str | None:
    """The project folder of task ``task_id`` when another project's state folder has it."""
    for state in state_dirs:
        record = TaskStore(state / "tasks").load(task_id)
        if record is not None:
            return record.project
    return None
