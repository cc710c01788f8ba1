"""The host-side trash: soft deletes and pre-command backups, restorable, purged by age."""

from runtime.trash.duration import parse_age
from runtime.trash.record import TrashEntry
from runtime.trash.remove import RemoveOutcome, remove_paths
from runtime.trash.store import RestoreResult, Trash

__all__ = ["RemoveOutcome", "RestoreResult", "Trash", "TrashEntry", "parse_age", "remove_paths"]
