"""Errors of workspace file operations (view, edit, write, confinement).

Every class has a stable UPPER_SNAKE ``code`` (public API, pinned by a test), a message saying what
happened, a ``hint`` with the next command to run, and ``details`` for ``--json``.
"""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class FileOpError(CanalError):
    """Root of file-operation errors. Bad input from the caller, so a usage exit code by default."""

    code = "FILE_OP_FAILED"
    exit_code = ExitCode.USAGE


class PathOutsideWorkspace(FileOpError):
    code = "PATH_OUTSIDE_WORKSPACE"


class SymlinkEscape(FileOpError):
    code = "SYMLINK_ESCAPE"


class PathNotFound(FileOpError):
    code = "PATH_NOT_FOUND"


class NotAFile(FileOpError):
    code = "NOT_A_REGULAR_FILE"


class IsADirectory(FileOpError):
    code = "IS_A_DIRECTORY"


class StringNotFound(FileOpError):
    code = "STRING_NOT_FOUND"


class AmbiguousMatch(FileOpError):
    code = "AMBIGUOUS_MATCH"


class NoChange(FileOpError):
    code = "NO_CHANGE"


class EmptyOldString(FileOpError):
    code = "EMPTY_OLD_STRING"


class FileChanged(FileOpError):
    code = "FILE_CHANGED"


class BinaryFile(FileOpError):
    code = "BINARY_FILE"


class FileTooLarge(FileOpError):
    code = "FILE_TOO_LARGE"


class InvalidRange(FileOpError):
    code = "INVALID_RANGE"


class FileIOError(FileOpError):
    """The operating system refused an operation we expected to work (permissions, disk full)."""

    code = "FILE_IO_ERROR"
    exit_code = ExitCode.CANAL_ERROR


class ProtectedPath(FileOpError):
    """The agent's file operations may not change Canal's settings or code-running git files."""

    code = "PATH_PROTECTED"
