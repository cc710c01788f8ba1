"""Errors of the host-side trash. Codes are public API (pinned by a test)."""

from __future__ import annotations

from canal.core.errors import ExitCode
from canal.host.files.errors import FileOpError


class TrashError(FileOpError):
    code = "TRASH_ERROR"


class TrashEntryNotFound(TrashError):
    code = "TRASH_ENTRY_NOT_FOUND"


class RestoreTargetExists(TrashError):
    code = "RESTORE_TARGET_EXISTS"


class CannotTrashWorkspace(TrashError):
    code = "CANNOT_TRASH_WORKSPACE"


class IsAFolderNeedsRecursive(TrashError):
    code = "FOLDER_NEEDS_RECURSIVE"


class UnsupportedFileType(TrashError):
    code = "UNSUPPORTED_FILE_TYPE"


class TrashCorrupt(TrashError):
    """An info record that cannot be read, or an entry whose stored item is missing."""

    code = "TRASH_CORRUPT"
    exit_code = ExitCode.CANAL_ERROR


class TrashFull(TrashError):
    """Keeping one more item would take the trash past storage.trash_total; nothing is evicted."""

    code = "TRASH_FULL"


class BackupTooLarge(TrashError):
    """A confirmed command would back up more than storage.backup_per_command; it was not run."""

    code = "BACKUP_TOO_LARGE"
