from __future__ import annotations

from datetime import timedelta

import pytest

from canal.core.duration import InvalidDuration, parse_duration
from canal.core.errors import ErrorCode
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
    """The module's classes and registered codes of the file-operation family, by name."""
    return {name: (cls.code, cls.exit_code) for name, cls in vars(module).items()
            if (isinstance(cls, type) and issubclass(cls, file_errors.FileOpError)
                and cls.__module__ == module.__name__)  # type: ignore[attr-defined]
            or (isinstance(cls, ErrorCode) and cls.where == module.__name__)}  # type: ignore[attr-defined]


def test_error_codes_are_pinned() -> None:
    assert _codes(file_errors) | _codes(trash_errors) == {
        "FileOpError": ("FILE_OP_FAILED", 2),
        "PathOutsideWorkspace": ("PATH_OUTSIDE_WORKSPACE", 2),
        "PATH_PROTECTED": ("PATH_PROTECTED", 2),
        "SymlinkEscape": ("SYMLINK_ESCAPE", 2),
        "PathNotFound": ("PATH_NOT_FOUND", 2),
        "NOT_A_REGULAR_FILE": ("NOT_A_REGULAR_FILE", 2),
        "IsADirectory": ("IS_A_DIRECTORY", 2),
        "STRING_NOT_FOUND": ("STRING_NOT_FOUND", 2),
        "AMBIGUOUS_MATCH": ("AMBIGUOUS_MATCH", 2),
        "NO_CHANGE": ("NO_CHANGE", 2),
        "EMPTY_OLD_STRING": ("EMPTY_OLD_STRING", 2),
        "FILE_CHANGED": ("FILE_CHANGED", 2),
        "BINARY_FILE": ("BINARY_FILE", 2),
        "FILE_TOO_LARGE": ("FILE_TOO_LARGE", 2),
        "INVALID_RANGE": ("INVALID_RANGE", 2),
        "FILE_IO_ERROR": ("FILE_IO_ERROR", 125),
        "TrashError": ("TRASH_ERROR", 2),
        "TRASH_ENTRY_NOT_FOUND": ("TRASH_ENTRY_NOT_FOUND", 2),
        "RestoreTargetExists": ("RESTORE_TARGET_EXISTS", 2),
        "CannotTrashWorkspace": ("CANNOT_TRASH_WORKSPACE", 2),
        "FOLDER_NEEDS_RECURSIVE": ("FOLDER_NEEDS_RECURSIVE", 2),
        "UNSUPPORTED_FILE_TYPE": ("UNSUPPORTED_FILE_TYPE", 2),
        "TrashCorrupt": ("TRASH_CORRUPT", 125),
        "TRASH_FULL": ("TRASH_FULL", 2),
        "BACKUP_TOO_LARGE": ("BACKUP_TOO_LARGE", 2),
    }
