"""Where discover's generated files live: ``<project>/.canal/discover/`` (nothing secret is in them).

    index.txt              what an agent reads: workflows first, then tools, one line each
    index.json             the same entries, versioned: what the next run compares against
    tools/<name>.json      one metadata file per tool (fields, types, required, enums)
    rules/<name>.rules     one rules file per tool (see rules.py); people may edit these
"""

from __future__ import annotations

from pathlib import Path

from canal.core.next import act
from canal.workflows.tools.errors import DISCOVER_PATH_UNSAFE

DISCOVER_DIR = Path(".canal") / "discover"


def discover_dir(project_dir: Path) -> Path:
    return project_dir / DISCOVER_DIR


def index_text_path(project_dir: Path) -> Path:
    return discover_dir(project_dir) / "index.txt"


def index_json_path(project_dir: Path) -> Path:
    return discover_dir(project_dir) / "index.json"


def meta_path(project_dir: Path, tool: str) -> Path:
    return discover_dir(project_dir) / "tools" / f"{tool}.json"


def rules_path(project_dir: Path, tool: str) -> Path:
    return discover_dir(project_dir) / "rules" / f"{tool}.rules"


def refuse_symlink(path: Path, project_dir: Path) -> Path:
    """``path`` itself, when neither it nor any folder between the project and it is a symbolic link.

    The project folder may be mounted into a sandbox, where the agent can plant links; following
    one would let discover read a host file into an error message, or write and delete elsewhere.
    """
    try:
        rel = path.relative_to(project_dir)
    except ValueError:
        rel = None
    parts = [project_dir.joinpath(*rel.parts[:i]) for i in range(1, len(rel.parts) + 1)] if rel else [path]
    for part in parts:
        if part.is_symlink():
            msg = f"{part} is a symbolic link; discover reads and writes only real files in the project"
            raise DISCOVER_PATH_UNSAFE(msg, hint=f"remove the link ({part})", next=act("discover"),
                             details={"path": str(part)})
    return path
