"""The creator for workflow authors: ``init NAME`` and ``add-step NAME --id ID --type TYPE [--after ID]``.

Every file it writes is a valid starting point: ``validate`` passes on a fresh ``init`` and after each
``add-step``. Step files are renumbered so prefixes stay 01, 02, ... in the order the author chose.
"""

from __future__ import annotations

import re
from pathlib import Path

from canal.core.fsutil import atomic_write, make_dirs_owned
from canal.core.next import act
from canal.workflows.errors import STEP_NOT_FOUND, WORKFLOW_EXISTS, WorkflowError
from canal.workflows.frontmatter import FrontMatterError, parse
from canal.workflows.loader import MANIFEST, REFERENCES, STEP_FILE, step_files
from canal.workflows.model import NAME_PATTERN, STEP_ID_PATTERN, StepType

_BODIES: dict[str, str] = {
    "interactive": (
        "gate:\n  schema:\n    value: {{ type: string, required: true, desc: \"TODO: what to collect\" }}\n"
        "---\nTODO: tell the agent what to ask the user for, and why.\n"),
    "automated": (
        "automation:\n  run: [\"echo\", \"TODO: replace with the command, one argv element per item\"]\n"
        "  result: text\n---\nTODO: what this step does; the agent reads this while it runs.\n"),
    "notification": "---\nTODO: the stage summary shown to the agent before it goes on.\n",
}


def _write(path: Path, text: str) -> None:
    """Temp file, fsync, rename: an interrupted write never leaves half a definition."""
    atomic_write(path, text.encode("utf-8"), private_folder=False)


def step_text(step_id: str, step_type: StepType) -> str:
    head = f"---\nid: {step_id}\ntype: {step_type}\ntitle: \"TODO: one line\"\n"
    return head + _BODIES[step_type].format()


def init_workflow(root: Path, name: str, description: str = "") -> Path:
    """Create ``root/name`` with a manifest and one interactive step; returns the folder."""
    if not re.match(NAME_PATTERN, name):
        msg = f"workflow name '{name}' must match {NAME_PATTERN}"
        raise WorkflowError(msg, next=act("workflow.init", name="my-workflow"))
    folder = root / name
    if folder.exists():
        msg = f"{folder} already exists"
        raise WORKFLOW_EXISTS(msg, next=act("workflow.add_step", name=name, type="interactive"))
    make_dirs_owned(folder / REFERENCES, mode=0o700)  # owned like the project, as the files are
    summary = description or "TODO: one line saying what this workflow does"
    _write(folder / MANIFEST, f"---\nname: {name}\ndescription: \"{_yaml_text(summary)}\"\nversion: \"1\"\n"
           f"---\n# {name}\n\nOverview for people: what this workflow is for and what it changes.\n")
    _write(folder / REFERENCES / "01-collect-input.md", step_text("collect-input", "interactive"))
    return folder


def _yaml_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _step_ids(folder: Path) -> list[tuple[Path, str]]:
    out = []
    for path in step_files(folder):
        try:
            step_id = parse(path.read_text(encoding="utf-8")).data.get("id")
        except FrontMatterError as exc:
            msg = f"{path.name}:{exc.line}: {exc.message}"
            raise WorkflowError(msg, hint="fix it", next=act("workflow.validate", name=folder.name)) from exc
        out.append((path, str(step_id)))
    return out


def add_step(folder: Path, step_id: str, step_type: StepType, *, after: str | None = None) -> Path:
    """Insert a new step file after ``after`` (default: at the end) and renumber the prefixes."""
    if not re.match(STEP_ID_PATTERN, step_id):
        msg = f"step id '{step_id}' must match {STEP_ID_PATTERN}"
        raise WorkflowError(msg, next=act("workflow.add_step", name=folder.name, id="my-step",
                                          type=step_type))
    steps = _step_ids(folder)
    ids = [sid for _, sid in steps]
    if step_id in ids:
        msg = f"step id '{step_id}' is already used"
        raise WORKFLOW_EXISTS(msg, hint="pick another id",
                                  next=act("workflow.add_step", name=folder.name, type=step_type))
    index = len(steps)
    if after is not None:
        if after not in ids:
            msg = f"no step '{after}' in {folder.name} (steps: {', '.join(ids) or 'none'})"
            raise STEP_NOT_FOUND(msg, next=act("workflow.validate", name=folder.name))
        index = ids.index(after) + 1
    paths: list[Path | None] = [p for p, _ in steps]
    paths.insert(index, None)
    width = max(2, len(str(len(paths))))
    new_path = _renumber(folder / REFERENCES, paths, width, step_id)
    _write(new_path, step_text(step_id, step_type))
    return new_path


def _renumber(refs: Path, paths: list[Path | None], width: int, new_slug: str) -> Path:
    """Rename in two passes through temporary names, so no rename ever lands on another step's file."""
    make_dirs_owned(refs)
    moves: list[tuple[Path, Path]] = []
    new_path = refs / f"{1:0{width}d}-{new_slug}.md"
    for number, path in enumerate(paths, start=1):
        if path is None:
            new_path = refs / f"{number:0{width}d}-{new_slug}.md"
            continue
        match = STEP_FILE.match(path.name)
        slug = path.name[len(match.group(1)) + 1:] if match else path.name
        target = refs / f"{number:0{width}d}-{slug}"
        if target != path:
            moves.append((path, target))
    staged = [(path.rename(refs / f".renumber-{i}-{path.name}"), target) for i, (path, target) in
              enumerate(moves)]
    for temp, target in staged:
        temp.rename(target)
    return new_path
