"""Load a workflow folder (``WorkFlow.md`` + ``references/NN-*.md``) into a ``Definition``.

Loading collects every problem it finds, each with file and line, instead of stopping at the first;
``validate`` adds the cross-step checks on top.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from canal.workflows.frontmatter import FrontMatter, FrontMatterError, parse
from canal.workflows.model import Definition, StepDef, StepFront, WorkflowMeta

MANIFEST = "WorkFlow.md"
REFERENCES = "references"
STEP_FILE = re.compile(r"^(\d{1,4})-[A-Za-z0-9_-]+\.md$")


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message}


@dataclass
class Loaded:
    """A parsed workflow folder: the definition when it parsed, the front matter of each step by id."""

    root: Path
    definition: Definition | None = None
    problems: list[Problem] = field(default_factory=list)
    step_matter: dict[str, FrontMatter] = field(default_factory=dict)


def step_files(root: Path) -> list[Path]:
    folder = root / REFERENCES
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.suffix == ".md"), key=_order_key)


def _order_key(path: Path) -> tuple[int, str]:
    match = STEP_FILE.match(path.name)
    return (int(match.group(1)) if match else 1_000_000, path.name)


def digest_of(root: Path) -> str:
    """Content hash over the manifest and every step file (names and bytes)."""
    hasher = hashlib.sha256()
    for path in [root / MANIFEST, *step_files(root)]:
        if path.is_file():
            hasher.update(path.relative_to(root).as_posix().encode() + b"\0")
            hasher.update(path.read_bytes() + b"\0")
    return "sha256:" + hasher.hexdigest()


def _model_problems(exc: ValidationError, rel: str, matter: FrontMatter) -> list[Problem]:
    problems = []
    for error in exc.errors():
        loc = [part for part in error["loc"] if isinstance(part, str | int)]
        where = ".".join(str(part) for part in loc)
        message = error["msg"].removeprefix("Value error, ")
        problems.append(Problem(rel, matter.line_of(loc), f"{where}: {message}" if where else message))
    return problems


def _parse_model(path: Path, rel: str, model: type[BaseModel],
                 loaded: Loaded) -> tuple[BaseModel, FrontMatter] | None:
    try:
        matter = parse(path.read_text(encoding="utf-8"))
    except FrontMatterError as exc:
        loaded.problems.append(Problem(rel, exc.line, exc.message))
        return None
    except (OSError, UnicodeDecodeError) as exc:
        loaded.problems.append(Problem(rel, 1, f"cannot read: {exc}"))
        return None
    try:
        return model.model_validate(matter.data), matter
    except ValidationError as exc:
        loaded.problems.extend(_model_problems(exc, rel, matter))
        return None


def _load_steps(root: Path, loaded: Loaded) -> list[StepDef]:
    steps: list[StepDef] = []
    seen_prefix: dict[int, str] = {}
    for path in step_files(root):
        rel = path.relative_to(root).as_posix()
        match = STEP_FILE.match(path.name)
        if not match:
            loaded.problems.append(Problem(rel, 1, "step files are named NN-name.md (NN gives the order)"))
            continue
        order = int(match.group(1))
        if order in seen_prefix:
            loaded.problems.append(Problem(rel, 1, f"prefix {match.group(1)} is also used by "
                                           f"{seen_prefix[order]}: prefixes must be unique"))
        seen_prefix.setdefault(order, rel)
        parsed = _parse_model(path, rel, StepFront, loaded)
        if parsed is None:
            continue
        front, matter = parsed
        assert isinstance(front, StepFront)
        if front.id in loaded.step_matter:
            loaded.problems.append(Problem(rel, matter.line_of(["id"]), f"duplicate step id '{front.id}'"))
            continue
        loaded.step_matter[front.id] = matter
        steps.append(StepDef(**front.model_dump(by_alias=True, exclude_unset=True), order=order,
                             file=rel, instructions=matter.body))
    return steps


def load(root: Path) -> Loaded:
    """Parse the folder; ``definition`` is set only when every file parsed."""
    loaded = Loaded(root=root)
    if not (root / MANIFEST).is_file():
        loaded.problems.append(Problem(MANIFEST, 1, f"missing {MANIFEST} in {root}"))
        return loaded
    parsed = _parse_model(root / MANIFEST, MANIFEST, WorkflowMeta, loaded)
    steps = _load_steps(root, loaded)
    if not steps and not loaded.problems:
        loaded.problems.append(Problem(REFERENCES, 1, "no steps: add references/01-<name>.md"))
    if parsed is None or loaded.problems:
        return loaded
    meta, matter = parsed
    assert isinstance(meta, WorkflowMeta)
    loaded.definition = Definition(meta=meta, steps=steps, digest=digest_of(root), overview=matter.body)
    return loaded
