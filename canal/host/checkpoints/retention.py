"""Retention: never inside the floor (the newest ``floor_count`` checkpoints and everything younger than
``floor_hours``: the agent's own commands cannot push a checkpoint out of it); outside it, keep the newest
``keep`` younger than ``keep_days`` and the store under ``max_store_bytes``, a pinned checkpoint (taken
before a destructive or opaque command) going only by age; never the newest. Objects and manifests no
kept checkpoint uses are deleted (sweep.py); the server's store does that off the command path
(pruning.py)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from canal.core.fsutil import atomic_write
from canal.host.checkpoints import sweep
from canal.host.checkpoints.errors import CheckpointStoreCorrupt
from canal.host.checkpoints.models import Checkpoint
from canal.host.checkpoints.records import RecordSpan

if TYPE_CHECKING:
    from canal.host.checkpoints.store import CheckpointStore

DAY_S = 86400.0
HOUR_S = 3600.0
USAGE = "usage"
KEPT = "kept"  # how many checkpoints the last prune kept


def _last_kept(store: CheckpointStore) -> int:
    with contextlib.suppress(OSError, ValueError):
        return int((store.root / KEPT).read_text())
    return 0


def usage(store: CheckpointStore) -> int:
    """Bytes the objects take, as last counted (a trigger for pruning, recounted by every prune)."""
    with contextlib.suppress(OSError, ValueError):
        return int((store.root / USAGE).read_text())
    return 0


def add_usage(store: CheckpointStore, added: int) -> None:
    if added:
        atomic_write(store.root / USAGE, str(usage(store) + added).encode(), durable=False)  # a trigger


def due(store: CheckpointStore, span: RecordSpan | None = None) -> bool:
    """Cheap check: over the count, the oldest past its age, or the store over its size. ``span``: the
    records folder as the caller just saw it (under the lock), else listed here."""
    settings = store.settings
    span = span if span is not None else store.span()
    # a tenth of slack past `keep`, or past what the last prune had to keep (the floor, pins), so a busy
    # project prunes every few checkpoints, and one whose floor holds many does not prune at every one
    kept = max(settings.keep, settings.floor_count, _last_kept(store))
    if span.records > kept + max(settings.keep // 10, kept // 10):
        return True
    if usage(store) > settings.max_store_bytes:
        return True
    if not span.records:
        return False
    with contextlib.suppress(CheckpointStoreCorrupt, ValueError):
        oldest = store.verified.read(store.records_dir / span.oldest)  # checked once, then a stat
        return _age_s(oldest.created_at) > max(settings.keep_days * DAY_S, settings.floor_hours * HOUR_S)
    store.forget_span()  # the oldest it knew is gone or unreadable (another process pruned): list again
    return False


def in_floor(store: CheckpointStore, paths: list[Path], i: int, created_at: str | None) -> bool:
    """Whether the ``i``-th of ``paths`` (oldest first) is inside the floor: among the newest
    ``floor_count``, or younger than ``floor_hours``. A record that fails its check counts as inside."""
    settings = store.settings
    if len(paths) - i <= settings.floor_count or created_at is None:
        return True
    return _age_s(created_at) < settings.floor_hours * HOUR_S


class PruneNotRecorded(Exception):
    """The prune's record could not be written: nothing was removed."""


@dataclass
class Decision:
    """What retention keeps and what goes, record by record (oldest first)."""

    kept: dict[Path, str | None] = field(default_factory=dict)  # record -> its manifest (None: failed)
    doomed: list[Path] = field(default_factory=list)
    movable: list[Path] = field(default_factory=list)  # kept, but the store's size may push them out

    def names(self) -> set[str]:
        return {name for name in self.kept.values() if name is not None}

    def push_out(self) -> bool:
        """The oldest movable one goes too (the store is over its size); False when none is left."""
        if not self.movable:
            return False
        gone = self.movable.pop(0)
        del self.kept[gone]
        self.doomed.append(gone)
        return True

    def unlink(self, announce: Callable[[list[str]], object] | None = None) -> list[str]:
        """Remove the doomed records; ``announce`` (the store's ``on_prune``) is told their ids first,
        and when it raises nothing is removed (a prune is never unrecorded)."""
        ids = [f"cp-{int(p.stem)}" for p in sorted(self.doomed)]
        if ids and announce is not None:
            try:
                announce(ids)
            except Exception as exc:
                raise PruneNotRecorded(ids) from exc
        for path in self.doomed:
            path.unlink(missing_ok=True)
        return ids


def decide(store: CheckpointStore, keep_newest: int, *, before: int | None = None) -> Decision:
    """Which records go. Retention never touches the floor, and outside it a pinned checkpoint goes
    only by age. ``before`` (a person's act, checked by the caller): every checkpoint older than that
    sequence number goes too, floor and pins included."""
    settings = store.settings
    paths = store._record_paths()
    store.verified.forget_others({p.name for p in paths})
    store.forget_span()  # what it removes, and what others removed, is listed again at the next take
    decision = Decision()
    for i, path in enumerate(paths):
        seq = int(path.stem)
        try:
            record: Checkpoint | None = store.verified.read(path)
        except CheckpointStoreCorrupt:
            record = None  # a record that fails its check is kept, so `verify` can name it
        manifest = record.manifest if record is not None else None
        if seq == keep_newest:
            decision.kept[path] = manifest
            continue
        if before is not None and seq < before:
            decision.doomed.append(path)
            continue
        if record is None or in_floor(store, paths, i, record.created_at):
            decision.kept[path] = manifest
            continue
        too_old = _age_s(record.created_at) > settings.keep_days * DAY_S
        too_many = len(paths) - i > settings.keep
        if too_old or (too_many and not record.pinned):
            decision.doomed.append(path)
        else:
            decision.kept[path] = manifest
            if not record.pinned:
                decision.movable.append(path)
    return decision


def prune(store: CheckpointStore, keep_newest: int, *, before: int | None = None,
          automatic: bool = True) -> list[str]:
    """Delete what retention no longer keeps (under the caller's lock); returns the pruned checkpoint
    ids. Objects and manifests no kept state uses go with them (sweep.py). ``automatic``: retention's
    own act, announced to the store's ``on_prune`` before anything goes (a person's prune is recorded
    by its caller)."""
    decision = decide(store, keep_newest, before=before)
    if not decision.doomed and usage(store) <= store.settings.max_store_bytes:
        # nothing goes and the store is under its size (the count only grows between prunes): the
        # floor holds everything, as in a project's first day; nothing to read
        write_kept(store, len(decision.kept))
        return []
    found = sweep.survey(store, decision.names() | sweep.roots(store))
    while found.usage() > store.settings.max_store_bytes and decision.push_out():
        found = sweep.survey(store, decision.names() | sweep.roots(store))
    try:
        pruned = decision.unlink(store.on_prune if automatic else None)
    except PruneNotRecorded:
        return []  # nothing removed, nothing swept; past the store's cap the checkpoint is refused
    kept_bytes = sweep.sweep(store, found)
    atomic_write(store.root / USAGE, str(kept_bytes).encode(), durable=False)
    write_kept(store, len(decision.kept))
    return pruned


def write_kept(store: CheckpointStore, count: int) -> None:
    atomic_write(store.root / KEPT, str(count).encode(), durable=False)  # a trigger, as usage is


def floor_ids(store: CheckpointStore, before: int) -> list[str]:
    """The checkpoints older than ``before`` that are inside the floor or pinned: pruning them is a
    person's act."""
    paths = store._record_paths()
    found = []
    for i, path in enumerate(paths):
        if int(path.stem) >= before:
            break
        try:
            record: Checkpoint | None = store.verified.read(path)
        except CheckpointStoreCorrupt:
            record = None
        if record is None or record.pinned or in_floor(store, paths, i, record.created_at):
            found.append(f"cp-{int(path.stem)}")
    return found


def _age_s(created_at: str) -> float:
    return time.time() - datetime.fromisoformat(created_at).timestamp()
