"""A folder tree as data (kind, mode, owner, bytes or link target) to compare byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

Tree = dict[str, tuple[str, int, int, int, bytes]]


def tree(root: Path) -> Tree:
    out: Tree = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if path.is_symlink():
                out[rel] = ("l", 0, st.st_uid, st.st_gid, os.readlink(path).encode())
            elif path.is_dir():
                out[rel] = ("d", st.st_mode & 0o7777, st.st_uid, st.st_gid, b"")
            else:
                out[rel] = ("f", st.st_mode & 0o7777, st.st_uid, st.st_gid, path.read_bytes())
    return out
