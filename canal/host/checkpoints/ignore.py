"""Which paths a checkpoint leaves out: ``.gitignore`` files (git's rules, via pathspec) and the
configured ``exclude`` patterns. As in git, a path already covered stays covered when a .gitignore
later names it, so a command cannot hide files from the next checkpoint by editing .gitignore."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

import pathspec

GITIGNORE = ".gitignore"
_MAX_IGNORE_BYTES = 1024 * 1024  # a bigger .gitignore is read up to here


@dataclass
class Frame:
    """The rules in force inside one folder: the folder's own .gitignore on top of its parents'."""

    base: str  # folder, relative to the workspace ("" at the root)
    spec: pathspec.GitIgnoreSpec | None
    parent: Frame | None = None

    def child(self, rel: str, spec: pathspec.GitIgnoreSpec | None) -> Frame:
        return Frame(rel, spec, self) if spec is not None else self


@dataclass
class Ignorer:
    configured: pathspec.GitIgnoreSpec | None
    use_gitignore: bool
    specs: dict[str, pathspec.GitIgnoreSpec] = field(default_factory=dict)

    @classmethod
    def make(cls, exclude: tuple[str, ...], use_gitignore: bool) -> Ignorer:
        configured = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
        return cls(configured, use_gitignore)

    def configured_reason(self, rel: str, is_dir: bool) -> str | None:
        if self.configured is None:
            return None
        return "excluded by canal.yaml" if self.configured.match_file(rel + "/" * is_dir) else None

    def git_reason(self, frame: Frame, rel: str, is_dir: bool) -> str | None:
        """Git's precedence: the deepest .gitignore with a matching pattern decides."""
        node: Frame | None = frame
        while node is not None:
            if node.spec is not None:
                sub = rel[len(node.base) + 1:] if node.base else rel
                result = node.spec.check_file(sub + "/" * is_dir)
                if result.include is not None:
                    return ".gitignore" if result.include else None
            node = node.parent
        return None

    def frame_for(self, parent: Frame, rel: str, dirfd: int, names: set[str]) -> Frame:
        """The frame of folder ``rel``, reading its .gitignore (a regular file only) when there is one."""
        if not self.use_gitignore or GITIGNORE not in names:
            return parent
        try:
            fd = os.open(GITIGNORE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
        except OSError:
            return parent
        try:
            if not _is_regular(fd):
                return parent
            text = os.read(fd, _MAX_IGNORE_BYTES).decode("utf-8", "replace")
        finally:
            os.close(fd)
        return parent.child(rel, _spec(text.splitlines()))


def _spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """The rules of a .gitignore; a line git rejects (a pattern ending in a lone backslash, a range
    such as ``[z-a]``) never matches in git and the others still apply: so here (the workspace's own
    file, which the agent writes, must not make every checkpoint fail)."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):  # pathspec's GitIgnorePatternError, or its regex's, at the first
        return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid(line)])


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


def _is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)
