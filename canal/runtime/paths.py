"""Where Canal keeps host-side state: outside every project and every sandbox mount.

Layout of one project's state folder (``state_dir_for``)::

    <data dir>/projects/<name>-<hash>/   audit/, state/, trash/, outputs/<sandbox>/, approvals/
    <config dir>/keys/                   key-encryption keys (never inside a project or a mount)

``CANAL_STATE_DIR`` replaces the per-project folder; ``CANAL_CONFIG_DIR`` the config folder.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from canal.core.fsutil import private_dir

DEFAULT_SANDBOX = "default"  # the sandbox commands use unless told otherwise (canal run --sandbox)


def data_root() -> Path:
    return Path(platformdirs.user_data_dir("canal", appauthor=False))


def config_dir() -> Path:
    override = os.environ.get("CANAL_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir("canal", appauthor=False))


def project_key(project_dir: Path) -> str:
    resolved = project_dir.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    return f"{resolved.name or 'root'}-{digest}"


def state_path_for(project_dir: Path) -> Path:
    """Where the project's host-side state folder is (nothing is created)."""
    override = os.environ.get("CANAL_STATE_DIR")
    return Path(override) if override else data_root() / "projects" / project_key(project_dir)


def state_dir_for(project_dir: Path) -> Path:
    """The project's host-side state folder (created 0700)."""
    return private_dir(state_path_for(project_dir))
