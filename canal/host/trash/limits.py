"""The backup cap of one confirmed command (storage.backup_per_command)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from canal.host.storage.usage import format_size, tree_usage
from canal.host.trash.errors import BACKUP_TOO_LARGE


def check_backup_size(hosts: Iterable[Path], cap: int, project: Path) -> None:
    """BACKUP_TOO_LARGE when the targets of one confirmed command take more than ``cap`` on disk: the
    command is not run, since it could not be undone."""
    sizes = {host: tree_usage(host) for host in hosts}
    total = sum(sizes.values())
    if total <= cap:
        return
    biggest = max(sizes, key=lambda h: sizes[h])
    shown = biggest.relative_to(project) if biggest.is_relative_to(project) else biggest
    msg = (f"backing up what this command deletes would take {format_size(total)} (the largest: {shown}, "
           f"{format_size(sizes[biggest])}), over the {format_size(cap)} a confirmed command may back up "
           "(storage.backup_per_command). Nothing was run.")
    raise BACKUP_TOO_LARGE(msg, hint="delete less at once (name smaller paths), or ask a person to raise "
                         "storage.backup_per_command in canal.yaml, then ask for confirmation again",
                         details={"bytes": total, "limit": cap, "largest": str(shown)})
