"""Retention: never inside the floor (the newest ``floor_count`` checkpoints and everything younger than
``floor_hours``: the agent's own commands cannot push a checkpoint out of it); outside it, keep the newest
``keep`` younger than ``keep_days`` and the store under ``max_store_bytes``, a pinned checkpoint (taken
before a destructive or opaque command) going only by age; never the newest. Objects and manifests no
kept checkpoint uses are deleted."""

from __future__ import annotations

import contextlib
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from canal.core.fsutil import atomic_write
from canal.host.checkpoints.errors import CheckpointStoreCorrupt
from canal.host.checkpoints.models import Checkpoint
from canal.host.checkpoints.records import manifest_chain, parse_entry, read_index, read_record
from canal.host.checkpoints.scan import Entry

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


def due(store: CheckpointStore) -> bool:
    """Cheap check: over the count, the oldest past its age, or the store over its size."""
    settings = store.settings
    paths = store._record_paths()
    # a tenth of slack past `keep`, or past what the last prune had to keep (the floor, pins), so a busy
    # project prunes every few checkpoints, and one whose floor holds many does not prune at every one
    kept = max(settings.keep, settings.floor_count, _last_kept(store))
    if len(paths) > kept + max(settings.keep // 10, kept // 10):
        return True
    if usage(store) > settings.max_store_bytes:
        return True
    if not paths:
        return False
    with contextlib.suppress(CheckpointStoreCorrupt, ValueError):
        oldest = read_record(paths[0], store.keys)
        return _age_s(oldest.created_at) > max(settings.keep_days * DAY_S, settings.floor_hours * HOUR_S)
    return False


def in_floor(store: CheckpointStore, paths: list[Path], i: int, created_at: str | None) -> bool:
    """Whether the ``i``-th of ``paths`` (oldest first) is inside the floor: among the newest
    ``floor_count``, or younger than ``floor_hours``. A record that fails its check counts as inside."""
    settings = store.settings
    if len(paths) - i <= settings.floor_count or created_at is None:
        return True
    return _age_s(created_at) < settings.floor_hours * HOUR_S


def prune(store: CheckpointStore, keep_newest: int, *, before: int | None = None) -> list[str]:
    """Delete what retention no longer keeps; returns the pruned checkpoint ids.

    Retention never touches the floor, and outside it a pinned checkpoint goes only by age. ``before``
    (a person's act, checked by the caller): every checkpoint older than that sequence number goes too,
    floor and pins included."""
    settings = store.settings
    paths = store._record_paths()
    doomed: list[Path] = []
    kept: list[Path] = []
    movable: list[Path] = []  # kept, but the store's size may still push them out (oldest first)
    for i, path in enumerate(paths):
        seq = int(path.stem)
        try:
            record: Checkpoint | None = read_record(path, store.keys)
        except CheckpointStoreCorrupt:
            record = None  # a record that fails its check is kept, so `verify` can name it
        if seq == keep_newest:
            kept.append(path)
            continue
        if before is not None and seq < before:
            doomed.append(path)
            continue
        if record is None or in_floor(store, paths, i, record.created_at):
            kept.append(path)
            continue
        too_old = _age_s(record.created_at) > settings.keep_days * DAY_S
        too_many = len(paths) - i > settings.keep
        if too_old or (too_many and not record.pinned):
            doomed.append(path)
        else:
            kept.append(path)
            if not record.pinned:
                movable.append(path)
    while movable and _usage_after(store, kept) > settings.max_store_bytes:
        gone = movable.pop(0)
        kept.remove(gone)
        doomed.append(gone)
    for path in doomed:
        path.unlink(missing_ok=True)
    _collect(store, kept)
    atomic_write(store.root / USAGE, str(_usage_after(store, kept)).encode(), durable=False)
    atomic_write(store.root / KEPT, str(len(kept)).encode(), durable=False)  # a trigger, as usage is
    return [f"cp-{int(p.stem)}" for p in sorted(doomed)]


def floor_ids(store: CheckpointStore, before: int) -> list[str]:
    """The checkpoints older than ``before`` that are inside the floor or pinned: pruning them is a
    person's act."""
    paths = store._record_paths()
    found = []
    for i, path in enumerate(paths):
        if int(path.stem) >= before:
            break
        try:
            record: Checkpoint | None = read_record(path, store.keys)
        except CheckpointStoreCorrupt:
            record = None
        if record is None or record.pinned or in_floor(store, paths, i, record.created_at):
            found.append(f"cp-{int(path.stem)}")
    return found


def _age_s(created_at: str) -> float:
    return time.time() - datetime.fromisoformat(created_at).timestamp()


def _live(store: CheckpointStore, kept: list[Path]) -> tuple[set[str], set[str]]:
    manifests: set[str] = set()
    objects: set[str] = set()
    for path in kept:
        with contextlib.suppress(CheckpointStoreCorrupt):
            manifests.add(read_record(path, store.keys).manifest)
    manifests |= store.pinned()  # forks' base checkpoints
    if store._cache is not None:
        manifests.add(store._cache[0])
    with contextlib.suppress(CheckpointStoreCorrupt):
        loaded = read_index(store.index_path, store.settings_hash, store.keys)
        if loaded is not None:
            manifests.add(loaded[0])  # the next checkpoint's delta stands on it
    states: dict[str, dict[str, Entry]] = {}  # chains share their parts: each state is built once
    for name in list(manifests):
        with contextlib.suppress(CheckpointStoreCorrupt):
            chain = manifest_chain(store.manifests_dir, name, skip=set(states))
            manifests.update(part for part, _ in chain)
            for part, doc in reversed(chain):
                if "entries" in doc:
                    states[part] = {p: parse_entry(e) for p, e in doc["entries"].items()}
                else:
                    state = dict(states[str(doc["parent"])])
                    for path in doc["del"]:
                        state.pop(path, None)
                    state.update({p: parse_entry(e) for p, e in doc["set"].items()})
                    states[part] = state
            if name in states:
                objects.update(e[6] for e in states[name].values() if e[0] == "f")
    return manifests, objects


def _usage_after(store: CheckpointStore, kept: list[Path]) -> int:
    _, objects = _live(store, kept)
    return sum(size for name, size in store.objects.names() if name in objects)


def _collect(store: CheckpointStore, kept: list[Path]) -> None:
    manifests, objects = _live(store, kept)
    for name, _ in list(store.objects.names()):
        if name not in objects:
            store.objects.remove(name)
    if store.manifests_dir.is_dir():
        for path in store.manifests_dir.iterdir():
            if path.suffix == ".z" and path.stem not in manifests:
                path.unlink(missing_ok=True)
