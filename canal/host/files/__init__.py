"""Workspace file operations: confinement, view, exact edits and whole-file writes that return diffs."""

from canal.host.files.confine import Located, Workspace
from canal.host.files.diff import Diff, file_diff, unified_diff
from canal.host.files.edit import edit_file
from canal.host.files.models import BinaryView, DirView, EditResult, TextView, ViewResult, WriteResult
from canal.host.files.protect import Protected
from canal.host.files.view import view_path
from canal.host.files.write import Backup, write_file

__all__ = ["Backup", "BinaryView", "Diff", "DirView", "EditResult", "Located", "Protected", "TextView",
           "ViewResult", "Workspace", "WriteResult", "edit_file", "file_diff", "unified_diff", "view_path",
           "write_file"]
