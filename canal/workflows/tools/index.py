"""The level-0 index of a project: workflows first, then tools, one line each, and its token cost."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.workflows.tools.layout import index_json_path


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str


class IndexFile(BaseModel):
    """``index.json``: the entries of the last discover run, compared against by the next one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    workflows: list[Entry] = []
    tools: list[Entry] = []

    @property
    def total(self) -> int:
        return len(self.workflows) + len(self.tools)

    def names(self) -> set[str]:
        return {e.name for e in (*self.workflows, *self.tools)}


def estimate_tokens(text: str) -> int:
    """A rough count for budgeting: about four characters a token for English and identifiers."""
    return math.ceil(len(text) / 4)


def entry_lines(index: IndexFile) -> list[str]:
    """The index body: a heading per kind (only when it has entries) and one line per entry."""
    lines: list[str] = []
    for title, entries in (("workflows", index.workflows), ("tools", index.tools)):
        if entries:
            lines.append(f"{title}:")
            lines.extend(f"  {e.name}: {e.description}" for e in entries)
    return lines


def render_index(index: IndexFile) -> str:
    head = (f"# canal index (workflows: {len(index.workflows)}, tools: {len(index.tools)}). "
            "A tool's fields: canal tool meta NAME")
    return "\n".join([head, *entry_lines(index)]) + "\n"


def read_index(project_dir: Path) -> IndexFile | None:
    """The cached index, or None when there is none or it cannot be read (then everything is new)."""
    path = index_json_path(project_dir)
    if any(p.is_symlink() for p in (path, path.parent, path.parent.parent)):
        return None
    try:
        return IndexFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
