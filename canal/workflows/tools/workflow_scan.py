"""The workflows a project offers, as discover sees them: name and description from ``WorkFlow.md``.

Only the front matter's ``name`` and ``description`` are read here; the workflow engine validates the
rest of a definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from canal.core.display import refuse_hidden
from canal.core.next import act
from canal.workflows.tools.errors import DISCOVER_WORKFLOW_INVALID, ToolError
from canal.workflows.tools.layout import refuse_symlink
from canal.workflows.tools.model import NAME_PATTERN
from canal.workflows.tools.registry import display_path
from canal.workflows.tools.yamlsrc import YamlSyntaxError, parse_yaml

WORKFLOWS_DIR = "workflows"
WORKFLOW_FILE = "WorkFlow.md"
_MAX_DEPTH = 3  # workflows/<name>/WorkFlow.md, or one grouping folder deeper (workflows/examples/<name>/)


class WorkflowHeader(BaseModel):
    # A partial view of the engine's front matter: other keys belong to the engine's own model.
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(min_length=1, max_length=200)

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return refuse_hidden(value, "description")


@dataclass(frozen=True)
class WorkflowEntry:
    name: str
    description: str
    path: Path


def _front_matter(text: str) -> str | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:i])
    return None


def _invalid(shown: str, line: int, problem: str) -> ToolError:
    return DISCOVER_WORKFLOW_INVALID(f"{shown}:{line}: {problem}", hint="fix the file", next=act("discover"),
                                 details={"file": shown, "line": line, "problem": problem})


def read_workflow(path: Path, base: Path) -> WorkflowEntry:
    shown = display_path(path, base)
    front = _front_matter(path.read_text(encoding="utf-8"))
    if front is None:
        raise _invalid(shown, 1, "expected YAML front matter between --- lines (name, description)")
    try:
        src = parse_yaml(front, path, line_offset=1)
    except YamlSyntaxError as exc:
        raise _invalid(shown, exc.line, f"YAML syntax: {exc.problem}") from None
    try:
        header = WorkflowHeader.model_validate(src.data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise _invalid(shown, src.line_of(err["loc"]), f"{where}: {err['msg']}".lstrip(": ")) from None
    return WorkflowEntry(header.name, header.description, path)


def _candidates(root: Path) -> list[Path]:
    found: list[Path] = []
    for path in root.rglob(WORKFLOW_FILE):
        rel = path.relative_to(root)
        if len(rel.parts) <= _MAX_DEPTH and not any(p.startswith(".") for p in rel.parts):
            found.append(path)
    return sorted(found)


def scan_workflows(project_dir: Path) -> list[WorkflowEntry]:
    """Every workflow under ``<project>/workflows/``, sorted by name; duplicate names are an error."""
    root = refuse_symlink(project_dir / WORKFLOWS_DIR, project_dir)
    if not root.is_dir():
        return []
    entries: dict[str, WorkflowEntry] = {}
    for path in _candidates(root):
        refuse_symlink(path, project_dir)
        entry = read_workflow(path, project_dir)
        if entry.name in entries:
            other = display_path(entries[entry.name].path, project_dir)
            problem = f"workflow name {entry.name!r} is also used by {other}"
            raise _invalid(display_path(path, project_dir), 2, problem)
        entries[entry.name] = entry
    return [entries[n] for n in sorted(entries)]
