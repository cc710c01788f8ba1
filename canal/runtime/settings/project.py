"""Finding the project a command belongs to, as git and ruff do: walking up from the working directory.

1. ``CANAL_PROJECT_DIR``, when set (a folder given in code or with ``canal -C DIR`` wins over it);
2. the nearest folder upward holding ``canal.yaml``;
3. else the root of the repository around it (the nearest folder upward with ``.git`` or ``.hg``);
4. else the working directory itself, unless that is the home folder or ``/``: a project there would
   mount every file of the person into a sandbox, so Canal asks for a project instead (``NO_PROJECT``).

Every front end says which folder it resolved and how (``canal doctor``, ``--json`` outputs).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from canal.core.errors import CanalError, ExitCode

CONFIG_NAME = "canal.yaml"
PROJECT_ENV = "CANAL_PROJECT_DIR"
REPOSITORY_MARKERS = (".git", ".hg")
FoundBy = Literal["given", "environment", "canal.yaml", "repository", "working directory"]
_HOW = {
    "given": "given explicitly",
    "environment": f"from {PROJECT_ENV}",
    "canal.yaml": f"the nearest folder upward with {CONFIG_NAME}",
    "repository": f"the repository root; no {CONFIG_NAME} above the working directory",
    "working directory": f"the working directory; no {CONFIG_NAME} or repository above it",
}


class ProjectNotFound(CanalError):
    """No usable project folder: ``CANAL_PROJECT_DIR`` names no folder, or the search ended in the home
    folder or ``/``, which Canal will not mount into a sandbox."""

    code = "NO_PROJECT"
    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class ProjectLocation:
    """The project folder and how it was found."""

    root: Path
    found_by: FoundBy

    @property
    def how(self) -> str:
        return _HOW[self.found_by]

    def to_json(self) -> dict[str, str]:
        return {"dir": str(self.root), "found_by": self.found_by}


def locate_project(start: Path | None = None) -> ProjectLocation:
    """Where the project of ``start`` (default: the working directory) is; ``NO_PROJECT`` when none is."""
    override = os.environ.get(PROJECT_ENV)
    if override and start is None:
        return ProjectLocation(_existing_dir(Path(override)), "environment")
    here = _existing_dir(start) if start is not None else _working_dir()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return ProjectLocation(folder, "canal.yaml")
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in REPOSITORY_MARKERS):
            return ProjectLocation(folder, "repository")
    refuse_too_wide(here, f"{here} is not inside a project: no {CONFIG_NAME} and no repository above it")
    return ProjectLocation(here, "working directory")


def refuse_too_wide(folder: Path, why: str) -> None:
    """``NO_PROJECT`` when ``folder`` is the home folder or ``/``: every file of the person in a sandbox."""
    if folder in _too_wide():
        what = "your home folder" if folder != Path("/") else "/"
        msg = f"{why}, and Canal will not make {what} a project (every file in it would be mounted " \
              "into the sandbox)."
        raise ProjectNotFound(msg, hint="cd into your project's folder (canal init there makes it a "
                              "project), or name it: canal -C DIR ...", details={"dir": str(folder)})


def find_project_dir(start: Path | None = None) -> Path:
    """The project folder of ``start`` (see ``locate_project``)."""
    return locate_project(start).root


def _existing_dir(path: Path) -> Path:
    resolved = path.expanduser().resolve()
    if not resolved.is_dir():
        what = "does not exist" if not resolved.exists() else "is not a folder"
        source = f" ({PROJECT_ENV})" if os.environ.get(PROJECT_ENV) == str(path) else ""
        msg = f"The project folder {path}{source} {what}."
        raise ProjectNotFound(msg, hint=f"unset {PROJECT_ENV}, or point it at your project's folder"
                              if source else "name an existing folder", details={"dir": str(path)})
    return resolved


def _working_dir() -> Path:
    try:
        return Path.cwd().resolve()
    except FileNotFoundError:
        msg = "The working directory no longer exists (it was deleted or moved)."
        raise ProjectNotFound(msg, hint="cd into your project's folder, then run the command again") from None


def _too_wide() -> set[Path]:
    wide = {Path("/")}
    with contextlib.suppress(RuntimeError):  # no home folder for this user
        wide.add(Path.home().resolve())
    return wide
