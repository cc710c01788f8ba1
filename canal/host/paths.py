"""Where Canal keeps host-side state: outside every project and every sandbox mount.

Layout of the state root (``state_root``: ``CANAL_STATE_DIR``, else the data folder)::

    <state root>/projects/<name>-<hash>/ one project's folder (``state_dir_for``): audit/, state/,
                                         trash/, outputs/<sandbox>/, approvals/, trusted-config.json
    <config dir>/keys/                   key-encryption keys (never inside a project or a mount)

Every project has its own folder under the root, whoever points ``CANAL_STATE_DIR`` at it: two
projects never share an audit log or an approval record. ``CANAL_CONFIG_DIR`` replaces the config folder.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from canal.core.fsutil import private_dir

DEFAULT_SANDBOX = "default"  # the sandbox commands use unless told otherwise (canal run --sandbox)
PROJECTS = "projects"  # in the state root: one folder per project


def data_root() -> Path:
    return Path(platformdirs.user_data_dir("canal", appauthor=False))


def state_root() -> Path:
    """The folder that holds every project's state folder: ``CANAL_STATE_DIR``, else the data folder."""
    override = os.environ.get("CANAL_STATE_DIR")
    return Path(override) if override else data_root()


def config_dir() -> Path:
    override = os.environ.get("CANAL_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir("canal", appauthor=False))


def project_key(project_dir: Path) -> str:
    resolved = project_dir.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    return f"{resolved.name or 'root'}-{digest}"


def state_path_for(project_dir: Path, root: Path | None = None) -> Path:
    """Where the project's host-side state folder is (nothing is created, nothing migrated). ``root``:
    the state root as read earlier (default: now)."""
    return (state_root() if root is None else root) / PROJECTS / project_key(project_dir)


def state_dir_for(project_dir: Path, root: Path | None = None) -> Path:
    """The project's host-side state folder (created 0700). A state root in the old flat layout (one
    project's folder) is moved into its project's folder first, or refused (``STATE_DIR_MIXED``)."""
    from canal.host.state_layout import settle_layout

    root = state_root() if root is None else root
    settle_layout(root)
    return private_dir(state_path_for(project_dir, root))
