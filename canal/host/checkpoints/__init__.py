"""Checkpoints: the workspace recorded host-side before every command that may change it, so any change
can be undone (``canal checkpoints``, ``canal diff``, ``canal undo``). See docs/checkpoints.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from canal.core.lazy import exports

if TYPE_CHECKING:
    from canal.host.checkpoints.errors import (
        CHECKPOINT_FAILED,
        CHECKPOINT_NOT_FOUND,
        WORKSPACE_TOO_BIG,
        CheckpointError,
        CheckpointStoreCorrupt,
    )
    from canal.host.checkpoints.models import (
        Change,
        Checkpoint,
        CorruptRecord,
        DiffResult,
        History,
        HistoryRow,
        NotCovered,
        UndoResult,
    )
    from canal.host.checkpoints.records import Keys
    from canal.host.checkpoints.settings import CheckpointSettings
    from canal.host.checkpoints.store import CheckpointStore

__all__ = [
    "CHECKPOINT_FAILED",
    "CHECKPOINT_NOT_FOUND",
    "WORKSPACE_TOO_BIG",
    "Change",
    "Checkpoint",
    "CheckpointError",
    "CheckpointSettings",
    "CheckpointStore",
    "CheckpointStoreCorrupt",
    "CorruptRecord",
    "DiffResult",
    "History",
    "HistoryRow",
    "Keys",
    "NotCovered",
    "UndoResult",
]

# each name is imported from its module when first used (canal.core.lazy)
__getattr__ = exports(__name__, {
    ".errors": (
        "CHECKPOINT_FAILED", "CHECKPOINT_NOT_FOUND", "WORKSPACE_TOO_BIG", "CheckpointError",
        "CheckpointStoreCorrupt",
    ),
    ".models": (
        "Change", "Checkpoint", "CorruptRecord", "DiffResult", "History", "HistoryRow", "NotCovered",
        "UndoResult",
    ),
    ".records": ("Keys",),
    ".settings": ("CheckpointSettings",),
    ".store": ("CheckpointStore",),
})
