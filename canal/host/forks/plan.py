"""Which fork changes an apply carries, and which of them clash with the real project."""

from __future__ import annotations

from collections.abc import Mapping

from canal.host.checkpoints.models import Change
from canal.host.checkpoints.scan import Entry
from canal.host.forks.models import Conflict


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def selected(changes: list[Change], paths: tuple[str, ...], base: Mapping[str, Entry],
             now: Mapping[str, Entry]) -> list[Change]:
    """The changes under ``paths`` (all when empty), with the new folders they need."""
    if not paths:
        return changes
    wanted = [p.strip("/") for p in paths]
    chosen = {c.path for c in changes if any(_under(c.path, w) for w in wanted)}
    for path in list(chosen):  # a new file needs its new parent folders
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in base and parent in now:
                chosen.add(parent)
    return [c for c in changes if c.path in chosen]


def conflicts(fork: list[Change], project: list[Change]) -> list[Conflict]:
    """Paths both sides changed since the fork (the same path, or one inside the other)."""
    out = []
    for f in fork:
        for p in project:
            if _under(f.path, p.path) or _under(p.path, f.path):
                out.append(Conflict(path=f.path, fork=f"{f.kind} {f.detail}".strip(),
                                    project=f"{p.kind} {p.path}".strip()))
                break
    return out
