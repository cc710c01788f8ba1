"""The host-side trash: soft deletes and backups of workspace entries, restorable with their modes.

Layout (FreeDesktop-like)::

    <root>/info/<id>.json   the info record (reserved with O_EXCL before anything moves)
    <root>/files/<id>       the item: file, symlink (the link itself) or a whole folder tree

``root`` is ``<state dir>/trash``: on the host, outside every sandbox mount.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import stat
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.core.fsutil import atomic_write, folder_owner, fsync_dir, private_dir
from canal.core.next import act
from canal.host.files.confine import Located, Workspace, open_parent
from canal.host.files.errors import PathNotFound
from canal.host.files.protect import Protected
from canal.host.ports import AuditSink
from canal.host.storage.usage import format_size, tree_usage
from canal.host.trash.errors import (
    TRASH_ENTRY_NOT_FOUND,
    TRASH_FULL,
    CannotTrashWorkspace,
    RestoreTargetExists,
    TrashCorrupt,
)
from canal.host.trash.record import ID_PATTERN, TrashEntry, digest, new_id, utc_now
from canal.host.trash.transfer import adopt_tree, copy_entry, kind_of, lstat_at, move_entry, remove_entry

STALE_RESERVATION_S = 3600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class RestoreResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    status: str = "restored"
    entry: TrashEntry
    restored_to: str
    displaced_id: str | None = None


class Trash:
    """Soft delete (``put(move=True)``), backup (``put(move=False)``), restore, list and purge."""

    def __init__(self, root: Path, audit: AuditSink | None = None, *,
                 clock: Callable[[], datetime] = utc_now, max_total: int | None = None) -> None:
        self.root = root
        self.max_total = max_total  # storage.trash_total: past it, put() refuses (nothing is evicted)
        self.audit = audit
        self.clock = clock
        self.info_dir = root / "info"
        self.files_dir = root / "files"

    def _ensure(self) -> None:
        private_dir(self.root)
        private_dir(self.info_dir)
        private_dir(self.files_dir)

    def put(self, path: Path, *, workspace: Path, move: bool, actor: str) -> TrashEntry:
        """Trash (``move=True``) or back up (``move=False``) the entry at ``path``, never following a
        final symlink. Raises PATH_NOT_FOUND when nothing is there."""
        loc = Workspace.at(workspace).locate(path, follow=False)
        if loc.is_root:
            msg = f"{loc.root} is the workspace itself; it cannot be trashed."
            raise CannotTrashWorkspace(msg, hint="name the files or folders inside it",
                                       details={"path": str(loc.root)})
        self._ensure()
        with open_parent(loc) as dfd:
            st = lstat_at(dfd, loc.name)
            if st is None:
                msg = f"{loc.display} does not exist."
                raise PathNotFound(msg, next=act("view", path=str(loc.rel.parent)),
                                   details={"path": loc.display})
            kind = kind_of(st, loc.display)
            self._check_room(loc.path, loc.display)
            entry_id, now = self._reserve()
            try:
                self._take(dfd, loc.name, entry_id, move=move)
            except BaseException:
                (self.info_dir / f"{entry_id}.json").unlink(missing_ok=True)
                raise
        size, sha = digest(self.files_dir / entry_id)
        data = {"id": entry_id, "original_path": str(loc.path), "workspace": str(loc.root),
                "rel_path": loc.display, "kind": kind, "operation": "move" if move else "copy",
                "deleted_at": now, "size": size, "sha256": sha, "mode": stat.S_IMODE(st.st_mode),
                "actor": actor}
        entry = TrashEntry.model_validate(data)
        info = self.info_dir / f"{entry_id}.json"
        # The record is complete before the audit append: if the log refuses, the item stays restorable.
        atomic_write(info, entry.model_dump_json(indent=2).encode())
        audit_id = self._audit("trash.put", {**data, "deleted_at": now.isoformat()}, actor)
        if audit_id is not None:
            entry = entry.model_copy(update={"audit_id": audit_id})
            atomic_write(info, entry.model_dump_json(indent=2).encode())
        return entry

    def usage(self) -> int:
        """Bytes the trash holds on disk (holes of sparse files and extra hard links cost nothing)."""
        return tree_usage(self.files_dir) if self.files_dir.is_dir() else 0

    def _check_room(self, path: Path, display: str) -> None:
        if self.max_total is None:
            return
        size, held = tree_usage(path), self.usage()
        if held + size > self.max_total:
            msg = (f"{display} ({format_size(size)}) does not fit in the trash: it holds {format_size(held)} "
                   f"of its {format_size(self.max_total)} (storage.trash_total). Nothing was changed.")
            raise TRASH_FULL(msg, hint="a person frees room, or raises storage.trash_total in canal.yaml",
                            next=[act("trash.purge", older_than="7d"), act("trash.list")],
                            details={"path": display, "size": size, "held": held, "limit": self.max_total})

    def _reserve(self) -> tuple[str, datetime]:
        while True:
            now = self.clock()
            entry_id = new_id(now)
            try:
                fd = os.open(self.info_dir / f"{entry_id}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            os.close(fd)
            return entry_id, now

    def _take(self, dfd: int, name: str, entry_id: str, *, move: bool) -> None:
        tfd = os.open(self.files_dir, _DIR_FLAGS)
        try:
            if move:
                move_entry(dfd, name, tfd, entry_id, no_replace=True)
            else:
                copy_entry(dfd, name, tfd, entry_id)
                os.fsync(tfd)
        finally:
            os.close(tfd)

    def get(self, entry_id: str) -> TrashEntry:
        info = self.info_dir / f"{entry_id}.json"
        if not ID_PATTERN.match(entry_id) or not info.is_file():
            msg = f"No trash entry {entry_id!r}."
            raise TRASH_ENTRY_NOT_FOUND(msg, next=act("trash.list"), details={"id": entry_id})
        return self._load(info)

    def _load(self, info: Path) -> TrashEntry:
        try:
            return TrashEntry.model_validate_json(info.read_bytes())
        except ValidationError as exc:
            msg = f"The trash record {info} cannot be read: {exc.error_count()} problems."
            raise TrashCorrupt(msg, next=act("trash.list"), details={"info": str(info)}) from exc

    def list(self) -> list[TrashEntry]:
        """Complete entries, oldest first (a record still reserved, or unreadable, is left out)."""
        if not self.info_dir.is_dir():
            return []
        entries: list[TrashEntry] = []
        for info in self.info_dir.glob("*.json"):
            with contextlib.suppress(TrashCorrupt, OSError):
                entries.append(self._load(info))
        return sorted(entries, key=lambda e: (e.deleted_at, e.id))

    def restore(self, entry_id: str, *, to: Path | None = None, force: bool = False,
                actor: str = "agent", guard: Protected | None = None) -> RestoreResult:
        """Put an entry back at its original path (or ``to``). An existing target is refused unless
        ``force``, which first moves the existing one into the trash (so nothing is lost)."""
        entry = self.get(entry_id)
        item = self.files_dir / entry.id
        if not os.path.lexists(item):
            msg = f"The trash entry {entry.id} has a record but its content is gone."
            raise TrashCorrupt(msg, next=act("trash.list"), details={"id": entry.id})
        workspace = Workspace.at(Path(entry.workspace))
        loc = workspace.locate(to if to is not None else Path(entry.original_path), follow=False)
        if guard is not None:
            guard.check(loc, "restore", content=item)
        displaced = self._displace(loc, entry, force=force, actor=actor)
        with open_parent(loc, create=True) as dfd:
            tfd = os.open(self.files_dir, _DIR_FLAGS)
            try:
                move_entry(tfd, entry.id, dfd, loc.name, no_replace=True)
            except RestoreTargetExists:
                raise _target_exists(entry, loc) from None
            finally:
                os.close(tfd)
            adopt_tree(dfd, loc.name, *folder_owner(dfd))  # it takes the owner of the folder it lands in
        (self.info_dir / f"{entry.id}.json").unlink()
        fsync_dir(self.info_dir)
        self._audit("trash.restore", {"id": entry.id, "path": str(loc.path), "displaced_id": displaced},
                    actor)
        return RestoreResult(entry=entry, restored_to=str(loc.path), displaced_id=displaced)

    def _displace(self, loc: Located, entry: TrashEntry, *, force: bool, actor: str) -> str | None:
        try:
            with open_parent(loc) as dfd:
                present = lstat_at(dfd, loc.name) is not None
        except PathNotFound:
            return None
        if not present:
            return None
        if not force:
            raise _target_exists(entry, loc)
        return self.put(loc.path, workspace=loc.root, move=True, actor=actor).id

    def purge(self, older_than: timedelta, *, actor: str = "agent") -> builtins.list[TrashEntry]:
        """Delete for good the entries trashed more than ``older_than`` ago; returns them."""
        cutoff = self.clock() - older_than
        purged = [e for e in self.list() if e.deleted_at < cutoff]
        for entry in purged:
            self._discard(entry.id)
        # A reservation younger than an hour may belong to a put() still moving its item.
        self._drop_stale_reservations(min(cutoff.timestamp(), time.time() - STALE_RESERVATION_S))
        self._audit("trash.purge", {"older_than_seconds": int(older_than.total_seconds()),
                                    "ids": [e.id for e in purged]}, actor)
        return purged

    def _discard(self, entry_id: str) -> None:
        if self.files_dir.is_dir():
            tfd = os.open(self.files_dir, _DIR_FLAGS)
            try:
                remove_entry(tfd, entry_id)
            finally:
                os.close(tfd)
        (self.info_dir / f"{entry_id}.json").unlink(missing_ok=True)

    def _drop_stale_reservations(self, cutoff: float) -> None:
        """Records reserved by a run that died before finishing (empty files), once they are old."""
        if not self.info_dir.is_dir():
            return
        for info in self.info_dir.glob("*.json"):
            st = info.stat()
            if st.st_size == 0 and st.st_mtime < cutoff:
                self._discard(info.stem)

    def _audit(self, event: str, data: dict[str, object], actor: str) -> str | None:
        return self.audit.append(event, data, actor=actor) if self.audit is not None else None


def _target_exists(entry: TrashEntry, loc: Located) -> RestoreTargetExists:
    msg = f"{loc.display} already exists; trash entry {entry.id} was not restored over it."
    return RestoreTargetExists(msg, next=[act("restore", trash_id=entry.id, to="NEW_PATH"),
                                          act("restore", f"the current {loc.display} goes to the trash first",
                                              trash_id=entry.id, force=True)],
                               details={"id": entry.id, "path": str(loc.path)})
