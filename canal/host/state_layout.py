"""The state root's layout, and the move of an old flat state folder into it.

Before, ``CANAL_STATE_DIR`` *was* one project's state folder, so a second project pointed at it wrote
into the first one's audit log and approval record. Now it is a root with one folder per project
(``<root>/projects/<key>/``). A root that still holds a project's state at its top (``audit/``,
``trusted-config.json``, ...) is settled before any project uses it, under a lock of the root:

- what there names exactly one project (the audit log's opening record, the approval record's path,
  pending approvals): each entry is renamed into that project's folder (whichever project runs);
- what there names two projects, or none, or an entry that the project's folder already holds:
  refused (``STATE_DIR_MIXED``, ``STATE_DIR_UNCLAIMED``), nothing moved and nothing deleted, with the
  command that moves the old entries aside. Canal does not guess whose records they are.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from canal.core.errors import CanalError, ExitCode, register
from canal.core.fsutil import fsync_dir, private_dir
from canal.core.locking import LockTimeout, file_lock
from canal.host.paths import PROJECTS, project_key

# what a project's state folder holds at its top: found at the root, they are the old flat layout
FLAT_NAMES = ("audit", "state", "trash", "outputs", "approvals", "trusted-config.json", "checkpoints",
              "forks", "console", "egress", "policy-verified", "tasks", "locks")
LOCK_NAME = ".layout.lock"


STATE_DIR_MIXED = register(CanalError, "STATE_DIR_MIXED", """
    ``CANAL_STATE_DIR`` holds one project's state at its top (the layout before each project had
    its own folder), and Canal cannot tell it belongs to one project alone; nothing was moved or deleted.
    """, exit_code=ExitCode.CANAL_ERROR)


STATE_DIR_UNCLAIMED = register(CanalError, "STATE_DIR_UNCLAIMED", """
    ``CANAL_STATE_DIR`` holds state at its top (the old flat layout) that names no project at all;
    nothing was moved or deleted.
    """)


def flat_entries(root: Path) -> list[Path]:
    """The entries of the old flat layout at the top of ``root`` (none: the root is settled)."""
    return [root / name for name in FLAT_NAMES if os.path.lexists(root / name)]


def settle_layout(root: Path) -> None:
    """Move an old flat state folder into its project's folder, or refuse; nothing when settled."""
    if not flat_entries(root):
        return
    try:
        with file_lock(root / LOCK_NAME, timeout=30.0):
            entries = flat_entries(root)  # another process may have settled it meanwhile
            if entries:
                _move(root, entries, owner(root, entries))
    except LockTimeout as exc:
        msg = f"{root} is being reorganised by another canal process (its lock {exc.path} is held)"
        raise STATE_DIR_MIXED(msg, hint="try again in a moment", details={"state_root": str(root)}) from exc


def owner(root: Path, entries: list[Path]) -> str:
    """The one project the flat entries belong to; refused when they name two or none."""
    named = sorted(set(_claims(root)))
    aside = _aside_command(root, entries)
    details: dict[str, Any] = {"state_root": str(root), "projects": named,
                               "entries": [e.name for e in entries]}
    if len(named) == 1:
        return named[0]
    listed = ", ".join(e.name for e in entries)
    if not named:
        msg = (f"{root} holds state of the old layout ({listed}) that names no project: Canal cannot tell "
               "whose it is. Nothing was moved or deleted")
        raise STATE_DIR_UNCLAIMED(msg, hint=f"move it aside, then run again: {aside}", details=details)
    msg = (f"{root} holds the state of {len(named)} projects in one folder ({', '.join(named)}: the "
           f"layout before each project had its own folder). Canal cannot tell whose records are whose, "
           "so nothing was moved or deleted")
    raise STATE_DIR_MIXED(msg, hint=f"move the mixed state aside, then run again: {aside}", details=details)


def _claims(root: Path) -> Iterator[str]:
    """Each project key the flat state names: audit log, approval record, pending approvals."""
    first = _first_line(root / "audit" / "audit.jsonl")
    named = (first.get("data") or {}).get("project_id") if first.get("event") == "audit.opened" else None
    if isinstance(named, str) and named:
        yield named
    trust = _json(root / "trusted-config.json")
    if isinstance(trust.get("project"), str) and trust["project"]:
        yield project_key(Path(trust["project"]))
    approvals = root / "approvals"
    for path in sorted(approvals.glob("*.json")) if approvals.is_dir() else ():
        project = _json(path).get("project")
        if isinstance(project, str) and project:
            yield project


def _first_line(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            line = handle.readline(1 << 20)
        value = json.loads(line)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_bytes()) if path.stat().st_size <= 1 << 22 else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _move(root: Path, entries: list[Path], key: str) -> None:
    target = root / PROJECTS / key
    taken = [e.name for e in entries if os.path.lexists(target / e.name)]
    if taken:
        msg = (f"{root} holds state of the old layout for {key}, and its folder {target} already holds "
               f"{', '.join(taken)}: Canal does not merge them. Nothing was moved or deleted")
        raise STATE_DIR_MIXED(msg, hint=f"move the old entries aside, then run again: "
                               f"{_aside_command(root, entries)}",
                               details={"state_root": str(root), "projects": [key], "taken": taken})
    private_dir(target)
    for entry in entries:
        os.rename(entry, target / entry.name)
    fsync_dir(target)
    fsync_dir(root)


def _aside_command(root: Path, entries: list[Path]) -> str:
    aside = root.with_name(root.name + ".old-layout")
    names = " ".join(shlex.quote(str(e)) for e in entries)
    return f"mkdir -m 700 {shlex.quote(str(aside))} && mv {names} {shlex.quote(str(aside))}/"
