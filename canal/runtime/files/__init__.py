"""Workspace file operations: confinement, view, exact edits and whole-file writes that return diffs."""

from canal.runtime.files.confine import Located, Workspace
from canal.runtime.files.diff import Diff, file_diff, unified_diff
from canal.runtime.files.edit import edit_file
from canal.runtime.files.models import BinaryView, DirView, EditResult, TextView, ViewResult, WriteResult
from canal.runtime.files.protect import Protected
from canal.runtime.files.view import view_path
from canal.runtime.files.write import Backup, write_file

__all__ = ["Backup", "BinaryView", "Diff", "DirView", "EditResult", "Located", "Protected", "TextView",
           "ViewResult", "Workspace", "WriteResult", "edit_file", "file_diff", "unified_diff", "view_path",
           "write_file"]
