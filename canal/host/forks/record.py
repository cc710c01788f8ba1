"""Where a fork's record lives: whether a sandbox is a fork is known without the fork store (a new
project's first command asks before its sandbox starts, and needs no checkpoint store for it)."""

from __future__ import annotations

from pathlib import Path

RECORD = "fork.json"  # in the fork's folder under the project's forks folder


def is_fork(root: Path, name: str) -> bool:
    """True when ``root`` (a project's forks folder) holds fork ``name``."""
    return (root / name / RECORD).is_file()
