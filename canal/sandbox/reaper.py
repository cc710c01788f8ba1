"""Remove expired or orphaned Canal sandboxes, and nothing else.

A container is a candidate only if it carries all of ``canal.owner``, ``canal.sandbox`` and
``canal.expires`` (and the owner matches, unless ``all_owners``). It is removed when its expiry has
passed, or when it is no longer running (its keepalive died: nothing can use it again).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from canal.sandbox.backend import LABEL_EXPIRES, LABEL_OWNER, LABEL_SANDBOX, SandboxBackend, SandboxInfo


def is_reapable(info: SandboxInfo, *, now: datetime) -> bool:
    labels = info.labels
    if not {LABEL_OWNER, LABEL_SANDBOX, LABEL_EXPIRES} <= set(labels):
        return False
    if info.expires_at is None or info.expires_at <= now:
        return True
    return not info.running


def reap(backend: SandboxBackend, *, all_owners: bool = False, now: datetime | None = None) -> list[str]:
    """Remove what ``is_reapable`` selects; returns the names removed."""
    moment = now or datetime.now(tz=UTC)
    doomed: Iterable[SandboxInfo] = [i for i in backend.list(all_owners=all_owners)
                                     if is_reapable(i, now=moment)]
    removed = []
    for info in doomed:
        backend.remove(info.name)
        removed.append(info.name)
    return removed
