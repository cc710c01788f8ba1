"""Caps on what Canal keeps on the host: saved outputs, backups and the trash (``storage:`` in canal.yaml)."""

from canal.host.storage.limits import StorageLimits
from canal.host.storage.usage import enforce_outputs_total, format_size, tree_usage

__all__ = ["StorageLimits", "enforce_outputs_total", "format_size", "tree_usage"]
