"""The host-side trash: soft deletes and pre-command backups, restorable, purged by age."""

from canal.runtime.trash.record import TrashEntry
from canal.runtime.trash.remove import RemoveOutcome, remove_paths
from canal.runtime.trash.store import RestoreResult, Trash

__all__ = ["RemoveOutcome", "RestoreResult", "Trash", "TrashEntry", "remove_paths"]
