"""The host-side trash: soft deletes and pre-command backups, restorable, purged by age."""

from canal.host.trash.record import TrashEntry
from canal.host.trash.remove import RemoveOutcome, remove_paths
from canal.host.trash.store import RestoreResult, Trash

__all__ = ["RemoveOutcome", "RestoreResult", "Trash", "TrashEntry", "remove_paths"]
