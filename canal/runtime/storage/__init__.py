"""Caps on what Canal keeps on the host: saved outputs, backups and the trash (``storage:`` in canal.yaml)."""

from canal.runtime.storage.limits import StorageLimits
from canal.runtime.storage.usage import enforce_outputs_total, format_size, tree_usage

__all__ = ["StorageLimits", "enforce_outputs_total", "format_size", "tree_usage"]
