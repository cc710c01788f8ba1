"""Errors of workspace file operations (view, edit, write, confinement).

Every class has a stable UPPER_SNAKE ``code`` (public API, pinned by a test), a message saying what
happened, a ``hint`` with the next command to run, and ``details`` for ``--json``.
"""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


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


NOT_A_REGULAR_FILE = register(FileOpError, "NOT_A_REGULAR_FILE", "Not a file.")


class IsADirectory(FileOpError):
    code = "IS_A_DIRECTORY"


STRING_NOT_FOUND = register(FileOpError, "STRING_NOT_FOUND", "String not found.")

AMBIGUOUS_MATCH = register(FileOpError, "AMBIGUOUS_MATCH", "Ambiguous match.")

NO_CHANGE = register(FileOpError, "NO_CHANGE", "No change.")

EMPTY_OLD_STRING = register(FileOpError, "EMPTY_OLD_STRING", "Empty old string.")

FILE_CHANGED = register(FileOpError, "FILE_CHANGED", "File changed.")

BINARY_FILE = register(FileOpError, "BINARY_FILE", "Binary file.")

FILE_TOO_LARGE = register(FileOpError, "FILE_TOO_LARGE", "File too large.")

INVALID_RANGE = register(FileOpError, "INVALID_RANGE", "Invalid range.")

FILE_IO_ERROR = register(FileOpError, "FILE_IO_ERROR", """
    The operating system refused an operation we expected to work (permissions, disk full).
    """, exit_code=ExitCode.CANAL_ERROR)

PATH_PROTECTED = register(FileOpError, "PATH_PROTECTED", """
    The agent's file operations may not change Canal's settings or code-running git files.
    """)
