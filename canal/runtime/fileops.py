"""``Canal.files``: the reversible workspace file operations of one project, as both front ends call them.

Paths are confined to the project folder; ``base`` is the folder a relative path starts from (the
project by default). Deletions and replaced files go to the host-side trash; edits and writes return
diffs; every operation is recorded in the audit log under the Canal's actor. Each method returns a
pydantic model (``model_dump(mode="json")`` is its ``--json`` shape).

Changes are guarded by default: the agent's operations may not change canal.yaml, its policy files or
git's code-running files. ``person=True`` lifts that, and only a front end that verified a person runs
the command (the CLI's approver check) may pass it.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from canal.host.files import (
    EditResult,
    Protected,
    ViewResult,
    Workspace,
    WriteResult,
    edit_file,
    view_path,
    write_file,
)
from canal.host.files.errors import FILE_IO_ERROR
from canal.host.files.errors import INVALID_RANGE as INVALID_RANGE  # the front ends' line ranges
from canal.host.files.fileio import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES  # what `canal write` reads
from canal.host.files.fileio import read_if_exists
from canal.host.trash import RemoveOutcome, RestoreResult, Trash, TrashEntry, remove_paths
from canal.runtime.services import Services
from canal.runtime.trust.snapshot import settings_files


@contextmanager
def _os_refusal(op: str, path: object) -> Iterator[None]:
    """What the operating system refuses (permissions, a full disk, a name too long) is ``FILE_IO_ERROR``
    naming the path as the caller gave it (the error never names a host path)."""
    try:
        yield
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        msg = f"Could not {op} {path}: {why}."
        hint = "check the name, the folder's permissions and the free space, then try again"
        details = {"operation": op, "path": str(path), "errno": errno.errorcode.get(exc.errno or 0, "")}
        raise FILE_IO_ERROR(msg, hint=hint, details=details) from None


class FileOps:
    def __init__(self, services: Services, actor: str) -> None:
        self.services = services
        self.actor = actor

    @property
    def workspace(self) -> Workspace:
        return Workspace.at(self.services.project_dir)

    @property
    def max_bytes(self) -> int:
        """The largest file one operation reads or writes (storage.file_per_operation)."""
        return self.services.config.storage.file_per_operation

    def _guard(self, person: bool) -> Protected | None:
        return None if person else Protected.of(settings_files(self.services.project_dir))

    def checkpoint(self, command: str) -> str:
        """Record the workspace before one of these operations changes it (a failure stops the
        operation, as it stops a command); returns the checkpoint id that undoes it."""
        return self.services.checkpoints.take(kind="file", command=command, actor=self.actor).id

    def view(self, path: Path | str = ".", *, base: Path | None = None, start: int | None = None,
             end: int | None = None) -> ViewResult:
        """A file with numbered lines (secrets redacted), a folder's entries, or a binary file's facts."""
        with _os_refusal("read", path):
            return view_path(self.workspace, path, base=base, start=start, end=end,
                             redactor=self.services.redactor, max_bytes=self.max_bytes)

    def read_bytes(self, path: Path | str) -> bytes | None:
        """A workspace file's bytes as they are, a final link followed inside the workspace (at most
        ``max_bytes``); None when there is no such file. In-process only: nothing is redacted, so the
        caller redacts what it shows (``Canal.redactor``)."""
        snap = read_if_exists(self.workspace.locate(path, follow=True), max_bytes=self.max_bytes)
        return None if snap is None else snap.data

    def edit(self, path: Path | str, old: str, new: str, *, replace_all: bool = False,
             base: Path | None = None, expect_sha256: str | None = None, person: bool = False) -> EditResult:
        """Replace exact text (once, or every occurrence); returns the diff."""
        services = self.services
        with _os_refusal("edit", path):
            return edit_file(self.workspace, path, old, new, replace_all=replace_all, base=base,
                             expect_sha256=expect_sha256, redactor=services.redactor, audit=services.audit,
                             actor=self.actor, guard=self._guard(person), max_bytes=self.max_bytes)

    def write(self, path: Path | str, data: bytes, *, base: Path | None = None,
              person: bool = False) -> WriteResult:
        """Write a whole file; a file it replaces is kept in the trash first."""
        trash, workspace = self.services.trash, self.workspace

        def backup(target: Path) -> str:
            return trash.put(target, workspace=workspace.root, move=False, actor=self.actor).id

        with _os_refusal("write", path):
            return write_file(workspace, path, data, base=base, backup=backup,
                              redactor=self.services.redactor, audit=trash.audit, actor=self.actor,
                              guard=self._guard(person), max_bytes=self.max_bytes)

    def remove(self, paths: Sequence[Path | str], *, recursive: bool = False,
               base: Path | None = None, person: bool = False) -> list[RemoveOutcome]:
        """Move files (folders with ``recursive``) to the trash; a path already gone is reported."""
        with _os_refusal("remove", ", ".join(str(p) for p in paths)):
            return remove_paths(self.services.trash, self.services.project_dir, [Path(p) for p in paths],
                                recursive=recursive, base=base, actor=self.actor, guard=self._guard(person))

    def restore(self, entry_id: str, *, to: Path | None = None, force: bool = False,
                person: bool = False) -> RestoreResult:
        """Put a trashed item back where it was (or at ``to``); ``force`` trashes what is there first."""
        with _os_refusal("restore", to if to is not None else entry_id):
            return self.services.trash.restore(entry_id, to=to, force=force, actor=self.actor,
                                               guard=self._guard(person))

    def trashed(self) -> list[TrashEntry]:
        """The trash of this project, oldest first (listing needs no key)."""
        return Trash(self.services.state_dir / "trash").list()

    def purge(self, older_than: timedelta) -> list[TrashEntry]:
        """Delete for good what was trashed longer ago than ``older_than`` (recorded in the audit log)."""
        return self.services.trash.purge(older_than, actor=self.actor)
