"""Errors of the host-side trash. Codes are public API (pinned by a test)."""

from __future__ import annotations

from canal.core.errors import ExitCode, register
from canal.host.files.errors import FileOpError


class TrashError(FileOpError):
    code = "TRASH_ERROR"


TRASH_ENTRY_NOT_FOUND = register(TrashError, "TRASH_ENTRY_NOT_FOUND", "Trash entry not found.")


class RestoreTargetExists(TrashError):
    code = "RESTORE_TARGET_EXISTS"


class CannotTrashWorkspace(TrashError):
    code = "CANNOT_TRASH_WORKSPACE"


FOLDER_NEEDS_RECURSIVE = register(TrashError, "FOLDER_NEEDS_RECURSIVE", "Is a folder needs recursive.")

UNSUPPORTED_FILE_TYPE = register(TrashError, "UNSUPPORTED_FILE_TYPE", "Unsupported file type.")


class TrashCorrupt(TrashError):
    """An info record that cannot be read, or an entry whose stored item is missing."""

    code = "TRASH_CORRUPT"
    exit_code = ExitCode.CANAL_ERROR


TRASH_FULL = register(TrashError, "TRASH_FULL", """
    Keeping one more item would take the trash past storage.trash_total; nothing is evicted.
    """)

BACKUP_TOO_LARGE = register(TrashError, "BACKUP_TOO_LARGE", """
    A confirmed command would back up more than storage.backup_per_command; it was not run.
    """)
