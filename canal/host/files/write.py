"""Writing a whole workspace file from given content; a replaced file is backed up first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from canal.host.files.confine import Workspace
from canal.host.files.diff import Diff, file_diff, split_lines
from canal.host.files.fileio import (
    DEFAULT_MAX_BYTES,
    NEW_FILE_MODE,
    check_size,
    is_binary,
    read_if_exists,
    replace_file,
    sha256_hex,
)
from canal.host.files.models import WriteResult
from canal.host.files.protect import Protected
from canal.host.ports import AuditSink, Redactor, no_redaction

# Keeps a copy of the file about to be replaced and returns its id (the trash: ``Trash.put(move=False)``).
Backup = Callable[[Path], str]


def write_file(workspace: Workspace, path: Path | str, data: bytes, *, base: Path | None = None,
               backup: Backup | None = None, redactor: Redactor = no_redaction,
               audit: AuditSink | None = None, actor: str = "agent",
               max_bytes: int = DEFAULT_MAX_BYTES, guard: Protected | None = None) -> WriteResult:
    """Write ``data`` atomically, creating missing folders; a replaced file keeps its mode.

    Writing the same bytes again is a no-op (``unchanged``), so a repeated call is harmless.
    """
    loc = workspace.locate(path, base=base, follow=True)
    if guard is not None:
        guard.check(loc, "write")
    check_size(len(data), loc, max_bytes)
    old = read_if_exists(loc, max_bytes=max_bytes)
    digest = sha256_hex(data)
    lines = len(split_lines(data.decode("utf-8", errors="replace")))
    if old is not None and old.sha256 == digest:
        return WriteResult(status="unchanged", path=loc.display, bytes=len(data), lines=lines, diff=None,
                           backup_id=None, sha256=digest)
    backup_id = backup(loc.path) if (backup is not None and old is not None) else None
    replace_file(loc, data, mode=old.mode if old else NEW_FILE_MODE,
                 expect_sha256=old.sha256 if old else None)
    if audit is not None:
        audit.append("file.write", {"path": loc.display, "sha256_before": old.sha256 if old else None,
                                    "sha256_after": digest, "backup_id": backup_id}, actor=actor)
    diff = _diff(old.data if old else b"", data, loc.display, created=old is None, redactor=redactor)
    return WriteResult(status="replaced" if old else "created", path=loc.display, bytes=len(data),
                       lines=lines, diff=diff.text if diff else None,
                       diff_truncated=diff.truncated if diff else False, backup_id=backup_id, sha256=digest)


def _diff(old: bytes, new: bytes, path: str, *, created: bool, redactor: Redactor) -> Diff | None:
    if is_binary(old) or is_binary(new):
        return None
    return file_diff(old.decode("utf-8"), new.decode("utf-8"), path=path, created=created, redactor=redactor)
