"""A project inside another project is bound by the enclosing project's approval.

An agent that may write the workspace can write ``sub/canal.yaml`` (or none at all) and run Canal with
``sub`` as the project (``canal -C sub``, ``CANAL_PROJECT_DIR``, ``Canal("sub")``). Compared with the
built-in defaults, such a file needs nobody's approval, and the approved settings of the project around
it (gVisor, ``approval: human``, rule files, limits) would be gone. So every folder above a project that
holds a ``canal.yaml`` or an approval record is an enclosing project, and the nested settings may only
tighten each enclosing project's approved settings, unless a person approved the nested content itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from canal.runtime.settings.project import CONFIG_NAME
from canal.runtime.trust.store import TRUST_FILE, TrustRecord, TrustStore


@dataclass(frozen=True)
class Enclosing:
    """An enclosing project and the settings a person approved for it."""

    project: Path
    record: TrustRecord


def enclosing_approvals(project_dir: Path, own_state: Path, state_of: Callable[[Path], Path],
                        key: bytes, earlier: Sequence[bytes] = ()) -> list[Enclosing]:
    """The approved enclosing projects of ``project_dir``, nearest first. A record that fails its check
    raises (``CONFIG_TRUST_INVALID``): an enclosing approval that cannot be read binds by refusing."""
    found: list[Enclosing] = []
    for folder in project_dir.parents:
        state = state_of(folder)
        if state == own_state:  # one shared state folder: the project's own record is that file
            continue
        if not (folder / CONFIG_NAME).is_file() and not (state / TRUST_FILE).is_file():
            continue
        record = TrustStore(state, key, earlier).load(folder)
        if record is not None:
            found.append(Enclosing(folder, record))
    return found


def enclosing_sources(project_dir: Path, own_state: Path, state_of: Callable[[Path], Path]) -> list[Path]:
    """Every file whose presence or content decides ``enclosing_approvals``: each folder above the
    project's canal.yaml and approval record, there or not (one made later binds the project too)."""
    return [path for folder in project_dir.parents if state_of(folder) != own_state
            for path in (folder / CONFIG_NAME, state_of(folder) / TRUST_FILE)]
