"""Workspace file operations: confinement, view, exact edits and whole-file writes that return diffs."""

from runtime.files.confine import Located, Workspace
from runtime.files.diff import Diff, file_diff, unified_diff
from runtime.files.edit import edit_file
from runtime.files.models import BinaryView, DirView, EditResult, TextView, ViewResult, WriteResult
from runtime.files.view import view_path
from runtime.files.write import Backup, write_file

__all__ = ["Backup", "BinaryView", "Diff", "DirView", "EditResult", "Located", "TextView", "ViewResult",
           "Workspace", "WriteResult", "edit_file", "file_diff", "unified_diff", "view_path", "write_file"]
