"""Where discover's generated files live: ``<project>/.canal/discover/`` (nothing secret is in them).

    index.txt              what an agent reads: workflows first, then tools, one line each
    index.json             the same entries, versioned: what the next run compares against
    tools/<name>.json      one metadata file per tool (fields, types, required, enums)
    rules/<name>.rules     one rules file per tool (see rules.py); people may edit these
"""

from __future__ import annotations

from pathlib import Path

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
