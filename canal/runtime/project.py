"""Finding the project a command belongs to: the nearest folder upward holding ``canal.yaml``."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_NAME = "canal.yaml"


def find_project_dir(start: Path | None = None) -> Path:
    """The nearest ancestor of ``start`` (default: the working directory) with a canal.yaml, else ``start``.

    Without ``start``, ``CANAL_PROJECT_DIR`` replaces the search; a ``start`` given (``canal -C DIR``)
    wins over it.
    """
    override = os.environ.get("CANAL_PROJECT_DIR")
    if override and start is None:
        return Path(override).resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    return here
