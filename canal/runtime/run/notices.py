"""The footer's "not covered" notice, said once per set of paths per sandbox session (and again when
the set changes): which paths were left out stays in every checkpoint record, ``--json`` and
``canal checkpoints``; the footer only says that there are some, and how many of what kind.

State: ``<state dir>/notices.json`` (versioned, written atomically, 0600): per sandbox, the session
(container id) and a digest of the set last said.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.core.fsutil import atomic_write
from canal.runtime.run.result import CheckpointView

FILE = "notices.json"


class _Seen(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: str
    digest: str


class _Notices(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = 1
    seen: dict[str, _Seen] = {}


def digest(cp: CheckpointView) -> str:
    body = json.dumps([cp.not_covered_total, sorted((n.path, n.reason) for n in cp.not_covered)])
    return hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def due(state_dir: Path, sandbox: str, session: str, cp: CheckpointView | None) -> bool:
    """Whether this checkpoint's notice is news for this sandbox session; records it as said."""
    if cp is None or not cp.not_covered_total:
        return False
    path = state_dir / FILE
    notices = _Notices()
    with contextlib.suppress(OSError, ValueError, ValidationError):
        notices = _Notices.model_validate_json(path.read_bytes())
    seen = _Seen(session=session, digest=digest(cp))
    if notices.seen.get(sandbox) == seen:
        return False
    notices.seen[sandbox] = seen
    with contextlib.suppress(OSError):  # a notice said twice is no harm; a command refused for it would be
        atomic_write(path, notices.model_dump_json().encode(), durable=False)
    return True


def short(cp: CheckpointView) -> str:
    """``not covered by undo: 7 paths (.gitignore 6, size cap 1)``."""
    kinds = Counter(_kind(n.reason) for n in cp.not_covered)
    rest = cp.not_covered_total - len(cp.not_covered)
    parts = [f"{kind} {count}" for kind, count in kinds.most_common()]
    if rest > 0:
        parts.append(f"more {rest}")
    return f"not covered by undo: {cp.not_covered_total} path(s) ({', '.join(parts)})"


def _kind(reason: str) -> str:
    if reason.startswith("over the size cap"):
        return "size cap"
    if reason == "excluded by canal.yaml":
        return "canal.yaml"
    return ".gitignore" if reason == ".gitignore" else "other"
