"""Files a command deletes, truncates, overwrites or appends to outside the workspace.

The checkpoint taken before a command covers the workspace only (/workspace unless canal.yaml's
``sandbox.workdir`` puts it elsewhere): a change anywhere else (the home folder,
/etc, /var/log, a writable extra mount) cannot be brought back, which is what standard asks a person
about. /tmp is the sandbox's own tmpfs, where no mount may be placed: nothing there is the host's.
Paths are resolved the way bash would (the cwd after literal ``cd``s, ``..``, ``~`` and every
spelling of ``$HOME``); one left relative (the cwd unknown) is outside, since nothing says otherwise.
Devices are not files (the block-device rules decide them).
"""

from __future__ import annotations

from canal.policy.paths import home_text, normalize
from canal.policy.shell.model import Segment
from canal.policy.targets import changed_as_written

WORKSPACE = "/workspace"
# The sandbox's own scratch space: a tmpfs of the container, gone with it, holding nothing of the host
# (no mount may be placed there: canal/sandbox/spec.py refuses a target under /tmp).
SCRATCH = "/tmp"


def outside_targets(seg: Segment, workspace: str = WORKSPACE) -> list[str]:
    found = [normalize(home_text(p, literal=False), seg.cwd) for p in changed_as_written(seg)]
    return [p for p in dict.fromkeys(found) if _outside(p, workspace)]


def _outside(path: str, workspace: str) -> bool:
    if any(path == top or path.startswith(top + "/") for top in (workspace, SCRATCH)):
        return False
    return not path.startswith("/dev/")
