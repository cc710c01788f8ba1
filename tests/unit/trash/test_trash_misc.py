from __future__ import annotations

from datetime import timedelta

import pytest

from canal.core.duration import InvalidDuration, parse_duration
from canal.host.files import errors as file_errors
from canal.host.trash import errors as trash_errors


@pytest.mark.parametrize(("text", "expected"), [("30d", timedelta(days=30)), ("12h", timedelta(hours=12)),
                                                ("90s", timedelta(seconds=90)), ("2w", timedelta(weeks=2)),
                                                ("15m", timedelta(minutes=15))])
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["30", "d", "-3d", "3 days", "1y", "9999999d"])
def test_parse_age_refuses_garbage(text: str) -> None:
    with pytest.raises(InvalidDuration):
        parse_duration(text)


def _codes(module: object) -> dict[str, tuple[str, int]]:
    return {name: (cls.code, cls.exit_code) for name, cls in vars(module).items()
            if isinstance(cls, type) and issubclass(cls, file_errors.FileOpError)
            and cls.__module__ == module.__name__}  # type: ignore[attr-defined]


def test_error_codes_are_pinned() -> None:
    assert _codes(file_errors) | _codes(trash_errors) == {
        "FileOpError": ("FILE_OP_FAILED", 2),
        "PathOutsideWorkspace": ("PATH_OUTSIDE_WORKSPACE", 2),
        "ProtectedPath": ("PATH_PROTECTED", 2),
        "SymlinkEscape": ("SYMLINK_ESCAPE", 2),
        "PathNotFound": ("PATH_NOT_FOUND", 2),
        "NotAFile": ("NOT_A_REGULAR_FILE", 2),
        "IsADirectory": ("IS_A_DIRECTORY", 2),
        "StringNotFound": ("STRING_NOT_FOUND", 2),
        "AmbiguousMatch": ("AMBIGUOUS_MATCH", 2),
        "NoChange": ("NO_CHANGE", 2),
        "EmptyOldString": ("EMPTY_OLD_STRING", 2),
        "FileChanged": ("FILE_CHANGED", 2),
        "BinaryFile": ("BINARY_FILE", 2),
        "FileTooLarge": ("FILE_TOO_LARGE", 2),
        "InvalidRange": ("INVALID_RANGE", 2),
        "FileIOError": ("FILE_IO_ERROR", 125),
        "TrashError": ("TRASH_ERROR", 2),
        "TrashEntryNotFound": ("TRASH_ENTRY_NOT_FOUND", 2),
        "RestoreTargetExists": ("RESTORE_TARGET_EXISTS", 2),
        "CannotTrashWorkspace": ("CANNOT_TRASH_WORKSPACE", 2),
        "IsAFolderNeedsRecursive": ("FOLDER_NEEDS_RECURSIVE", 2),
        "UnsupportedFileType": ("UNSUPPORTED_FILE_TYPE", 2),
        "TrashCorrupt": ("TRASH_CORRUPT", 125),
        "TrashFull": ("TRASH_FULL", 2),
        "BackupTooLarge": ("BACKUP_TOO_LARGE", 2),
    }
