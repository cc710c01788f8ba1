"""The info record kept beside each trashed item, its id, and the item's digest."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION: Final = 1
ID_PATTERN = re.compile(r"^t\d{8}T\d{6}Z-[0-9a-f]{6}$")
Kind = Literal["file", "dir", "symlink"]


class TrashEntry(BaseModel):
    """One trashed item (``info/<id>.json``); the item itself is ``files/<id>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str
    original_path: str
    workspace: str
    rel_path: str
    kind: Kind
    operation: Literal["move", "copy"]
    deleted_at: datetime
    size: int
    sha256: str
    mode: int
    actor: str
    audit_id: str | None = None


def new_id(now: datetime) -> str:
    return f"t{now.astimezone(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def utc_now() -> datetime:
    return datetime.now(UTC)


def digest(path: Path) -> tuple[int, str]:
    """(bytes of file content, sha256) of a file, a symlink (its target text) or a folder tree.

    A folder's digest covers every entry's relative path, kind, mode and content, in sorted order, so
    a restored tree can be compared with the one that was trashed.
    """
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path).encode()
        return len(target), hashlib.sha256(target).hexdigest()
    if stat.S_ISREG(st.st_mode):
        return st.st_size, _file_sha(path)
    tree = hashlib.sha256()
    total = 0
    for rel, sub in _walk(path):
        sst = sub.lstat()
        size, sha = digest(sub) if not stat.S_ISDIR(sst.st_mode) else (0, "")
        total += size if stat.S_ISREG(sst.st_mode) else 0
        tree.update(f"{rel}\0{stat.S_IFMT(sst.st_mode):o}\0{stat.S_IMODE(sst.st_mode):o}\0{sha}\n".encode())
    return total, tree.hexdigest()


def _walk(root: Path) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            sub = Path(folder, name)
            found.append((sub.relative_to(root).as_posix(), sub))
    return sorted(found)


def _file_sha(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
