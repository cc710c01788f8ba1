"""``canal rm``: soft delete of workspace paths into the trash; a path already gone is a no-op."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from canal.core.next import act
from canal.host.files.confine import Located, Workspace, open_parent
from canal.host.files.errors import PathNotFound
from canal.host.files.protect import Protected
from canal.host.trash.errors import FOLDER_NEEDS_RECURSIVE
from canal.host.trash.record import TrashEntry
from canal.host.trash.store import Trash


class RemoveOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    status: Literal["trashed", "already_gone"]
    entry: TrashEntry | None = None


def remove_paths(trash: Trash, workspace: Path, paths: list[Path], *, recursive: bool = False,
                 base: Path | None = None, actor: str = "agent",
                 guard: Protected | None = None) -> list[RemoveOutcome]:
    """Move each path into the trash. Every path is checked (confined, folder needs ``recursive``)
    before the first one moves, so a bad argument leaves everything in place."""
    ws = Workspace.at(workspace)
    located = [ws.locate(p, base=base, follow=False) for p in paths]
    for loc in located:
        if guard is not None:
            guard.check(loc, "remove")
        if not recursive and _is_dir(loc):
            msg = f"{loc.display} is a folder; removing it needs -r."
            raise FOLDER_NEEDS_RECURSIVE(msg, next=act("remove", path=loc.display, recursive=True),
                                          details={"path": loc.display})
    outcomes: list[RemoveOutcome] = []
    for loc in located:
        try:
            entry = trash.put(loc.path, workspace=ws.root, move=True, actor=actor)
        except PathNotFound:
            outcomes.append(RemoveOutcome(path=loc.display, status="already_gone"))
            continue
        outcomes.append(RemoveOutcome(path=loc.display, status="trashed", entry=entry))
    return outcomes


def _is_dir(loc: Located) -> bool:
    if loc.is_root:
        return False  # put() refuses the workspace itself with its own error
    try:
        with open_parent(loc) as dfd:
            st = os.stat(loc.name, dir_fd=dfd, follow_symlinks=False)
    except (PathNotFound, FileNotFoundError):
        return False
    return stat.S_ISDIR(st.st_mode)
