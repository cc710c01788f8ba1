"""``canal init``: a first, commented ``canal.yaml`` for a project.

Only the choices a person made are set; everything else is there as a comment with its default, so the
file documents itself. Written next to nothing else, never over an existing file, owned like its folder.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from canal.core.errors import CanalError, ExitCode, register
from canal.core.next import act
from canal.runtime.settings.project import CONFIG_NAME

Profile = Literal["standard", "strict"]
PROFILES: dict[str, str] = {
    "standard": "stops accidents and their disguises; scripts run, checkpoints protect the workspace",
    "strict": "read-only: no code execution beyond trusted programs, no secret reads (untrusted agents)",
}


CONFIG_EXISTS = register(CanalError, "CONFIG_EXISTS", """
    ``canal init`` found a canal.yaml already: it never overwrites one.
    """, exit_code=ExitCode.USAGE)


Preset = Literal["python", "node"]
PRESET_NOTES: dict[str, str] = {
    "python": "Python 3 with pip and venv, its headers, build-essential, make, pkg-config, git",
    "node": "Node.js with npm, build-essential, make, python3 (for node-gyp), git",
    "none": "the default image only (bash, coreutils, git, python3, jq, ripgrep, curl...)",
}
# Files whose presence suggests a preset, checked in this order.
PRESET_MARKERS: tuple[tuple[str, Preset], ...] = (
    ("pyproject.toml", "python"), ("setup.py", "python"), ("requirements.txt", "python"),
    ("package.json", "node"),
)


@dataclass(frozen=True)
class InitChoices:
    profile: Profile = "standard"
    preset: Preset | None = None


def detect_preset(folder: Path) -> Preset | None:
    """The preset a project's files suggest (pyproject.toml: python, package.json: node), or None."""
    return next((preset for name, preset in PRESET_MARKERS if (folder / name).is_file()), None)


TEMPLATE = """\
# Canal settings for this project (docs/config.md). Every key is optional: a commented line shows
# the default. Canal finds this file by walking up from the working directory, like git and ruff.
# Settings that loosen the defaults take effect once a person approves them: canal config approve

# standard: stops accidents and their disguises; scripts run, checkpoints protect the workspace.
# strict: read-only; no code runs beyond trusted programs, no secret is read (untrusted agents).
policy:
  profile: {profile:<20} # standard | strict (docs/policy.md)
  # files: [policy/extra.yaml]  # more rules, relative to this folder (they can only tighten)
  # approval: agent             # human: a person runs `canal approve TOKEN` before a confirmed command

# What the sandbox image adds (docs/images.md), built once and cached by content. Presets:
# python: {python_note}
# node: {node_note}
{open}image:
{open}  preset: {preset:<21} # python | node
#   apt: [libpq-dev]            # more Debian packages
#   pip: [pytest]               # Python packages (from PyPI, at build time)
#   npm: [typescript]           # npm packages, installed globally
#   files: [{{source: tools/setup.sh, target: /opt/tools/setup.sh}}]

# sandbox:
#   network: none               # none | bridge
#   limits: {{cpus: 1, memory: 1g, pids: 256, workspace_size: 1g}}
#   env: {{}}                     # extra environment for every command

# workspace: rw                 # rw | ro | none: this folder at /workspace in the sandbox
# timeouts: {{command: 120, idle: null}}
# presenter: {{max_lines: 200}}   # what the agent reads (docs/presenter.md)
# unattended: false             # no person watching: confirm becomes deny
"""


def render_config(choices: InitChoices) -> str:
    return TEMPLATE.format(profile=choices.profile, preset=choices.preset or "python",
                           open="" if choices.preset else "# ", python_note=PRESET_NOTES["python"],
                           node_note=PRESET_NOTES["node"])


def write_new_config(folder: Path, text: str) -> Path:
    """Create ``folder/canal.yaml`` (0644, owned like ``folder``); ``CONFIG_EXISTS`` if there is one.

    The file appears whole or not at all, and a file created meanwhile is never replaced (a hard link
    of the finished temp file, which fails when the name is taken)."""
    path = folder / CONFIG_NAME
    if path.exists() or path.is_symlink():
        raise _exists(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{CONFIG_NAME}.", suffix=".tmp")
    try:
        info = folder.stat()
        if os.geteuid() == 0:
            os.fchown(fd, info.st_uid, info.st_gid)
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode())
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise _exists(path) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return path


def _exists(path: Path) -> CanalError:
    return CONFIG_EXISTS(f"{path} already exists; canal init never overwrites it.",
                        hint=f"edit {path} (docs/config.md)", next=act("config.status"),
                        details={"file": str(path)})
