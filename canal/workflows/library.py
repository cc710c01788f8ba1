"""Finding workflow folders by name under a list of roots (the project's first, then shipped examples)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from canal.core.next import act
from canal.workflows.errors import WORKFLOW_NOT_FOUND
from canal.workflows.loader import MANIFEST


def workflow_dirs(roots: Sequence[Path]) -> dict[str, Path]:
    """Name (folder name) -> folder, for every folder directly under a root that holds a manifest.

    An earlier root wins over a later one with the same name.
    """
    found: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            if folder.is_dir() and (folder / MANIFEST).is_file():
                found.setdefault(folder.name, folder)
    return found


def find_workflow(name: str, roots: Sequence[Path]) -> Path:
    """The folder of workflow ``name``; a path to a folder is accepted too."""
    as_path = Path(name)
    if (as_path / MANIFEST).is_file():
        return as_path
    found = workflow_dirs(roots)
    if name in found:
        return found[name]
    known = ", ".join(sorted(found)) or "none"
    msg = f"no workflow named '{name}' (known: {known})"
    raise WORKFLOW_NOT_FOUND(
        msg,
        next=[act("workflow.list"), act("workflow.init", "to create one", name="NAME")],
        details={"name": name, "known": sorted(found), "roots": [str(r) for r in roots]},
    )
