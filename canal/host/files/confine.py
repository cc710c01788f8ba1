"""Confinement: every path an operation touches is resolved inside the workspace, and stays there.

Resolution happens twice. First on paths (``Workspace.locate``): the path is normalized, its parent
folder resolved through symlinks, and refused unless the result lies inside the workspace. Then on
file descriptors (``open_parent``): the operation walks from the workspace root to the canonical
parent one component at a time with ``O_NOFOLLOW``, so a component swapped for a symlink between
the check and the use (the sandbox writes this folder concurrently) makes the walk fail instead of
leading out. Operations then act on ``(parent_fd, name)`` and never on a path string.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from canal.core.fsutil import adopt_owner, folder_owner
from canal.core.next import act
from canal.host.files.errors import PathNotFound, PathOutsideWorkspace, SymlinkEscape

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Located:
    """A path inside the workspace: ``rel`` is canonical (no symlink in its parent chain)."""

    root: Path
    rel: PurePosixPath

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.rel.parts)

    @property
    def name(self) -> str:
        return self.rel.name

    @property
    def is_root(self) -> bool:
        return not self.rel.parts

    @property
    def display(self) -> str:
        return str(self.rel) if self.rel.parts else "."


@dataclass(frozen=True)
class Workspace:
    """The folder operations are confined to (the project folder, mounted into sandboxes)."""

    root: Path

    @classmethod
    def at(cls, path: Path) -> Workspace:
        root = Path(os.path.realpath(path))
        if not root.is_dir():
            msg = f"The workspace {path} is not a folder."
            raise PathNotFound(msg, hint="cd into your project folder, then run the command again",
                               details={"workspace": str(path)})
        return cls(root)

    def locate(self, path: Path | str, *, base: Path | None = None, follow: bool = False) -> Located:
        """Resolve ``path`` (relative to ``base``, default the root) inside the workspace.

        ``follow=False`` names the entry itself (a final symlink is the link); ``follow=True`` follows
        a final symlink, and refuses it when its target lies outside the workspace.
        """
        raw = Path(path)
        joined = raw if raw.is_absolute() else (base or self.root) / raw
        lexical = os.path.normpath(os.path.abspath(joined))
        root = str(self.root)
        parent = os.path.realpath(os.path.dirname(lexical))
        name = os.path.basename(lexical)
        if not _inside(parent, root) or not name:
            if os.path.realpath(lexical) == root:
                return Located(self.root, PurePosixPath())
            raise self._refusal(str(path), lexical)
        entry = os.path.join(parent, name)
        if follow and os.path.islink(entry):
            target = os.path.realpath(entry)
            if not _inside(target, root):
                msg = f"{path} is a symlink to {target}, outside the workspace {root}."
                raise SymlinkEscape(msg, hint="name a path inside the workspace, or remove the link",
                                    next=act("remove", path=str(path)),
                                    details={"path": str(path), "target": target})
            entry = target
        return Located(self.root, PurePosixPath(os.path.relpath(entry, root)))

    def _refusal(self, given: str, lexical: str) -> Exception:
        root = str(self.root)
        details = {"path": given, "workspace": root}
        if _inside(lexical, root):
            msg = f"{given} leads out of the workspace {root} through a symlink."
            return SymlinkEscape(msg, hint="name the path inside the workspace without the symlink",
                                 details=details)
        msg = f"{given} is outside the workspace {root}."
        return PathOutsideWorkspace(msg, hint=f"use a path inside {root}", next=act("view", path="."),
                                    details=details)


@contextlib.contextmanager
def open_parent(loc: Located, *, create: bool = False) -> Iterator[int]:
    """A descriptor of ``loc``'s parent folder, reached from the root without following symlinks.

    ``create=True`` makes missing folders on the way (each one inside the previous descriptor).
    """
    fd = os.open(loc.root, _DIR_FLAGS)
    try:
        for part in loc.rel.parts[:-1]:
            nxt = _open_child(fd, part, loc, create)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def _open_child(fd: int, part: str, loc: Located, create: bool) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            msg = f"{loc.display}: the folder {part} does not exist."
            raise PathNotFound(msg, next=act("view", path=str(loc.rel.parent)),
                               details={"path": loc.display}) from None
        made = True
        try:
            os.mkdir(part, 0o777, dir_fd=fd)
        except FileExistsError:
            made = False
        child = _open_child(fd, part, loc, create=False)
        if made:
            adopt_owner(child, *folder_owner(fd))  # a folder Canal makes takes its parent's owner
        return child
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            msg = f"{loc.display}: {part} is not a folder inside the workspace (a symlink or a file)."
            raise SymlinkEscape(msg, hint="check the folder, then run the command again",
                                details={"path": loc.display, "component": part}) from None
        raise
