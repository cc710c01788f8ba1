"""Retention: keep the newest ``keep`` checkpoints younger than ``keep_days``, and the store under
``max_store_bytes``; never the newest. Objects and manifests no kept checkpoint uses are deleted."""

from __future__ import annotations

import contextlib
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from canal.core.fsutil import atomic_write
from canal.runtime.checkpoints.errors import CheckpointStoreCorrupt
from canal.runtime.checkpoints.records import manifest_chain, parse_entry, read_index, read_record
from canal.runtime.checkpoints.scan import Entry

if TYPE_CHECKING:
    from canal.runtime.checkpoints.store import CheckpointStore

DAY_S = 86400.0
USAGE = "usage"


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
    # a tenth of slack past `keep`, so a busy project prunes every few checkpoints, not every one
    if len(paths) > settings.keep + settings.keep // 10 or usage(store) > settings.max_store_bytes:
        return True
    if not paths:
        return False
    with contextlib.suppress(CheckpointStoreCorrupt, ValueError):
        oldest = read_record(paths[0], store.keys)
        return _age_s(oldest.created_at) > settings.keep_days * DAY_S
    return False


def prune(store: CheckpointStore, keep_newest: int) -> list[str]:
    """Delete what retention no longer keeps; returns the pruned checkpoint ids."""
    settings = store.settings
    paths = store._record_paths()
    doomed = []
    kept = []
    for i, path in enumerate(paths):
        seq = int(path.stem)
        too_many = len(paths) - i > settings.keep
        try:
            record = read_record(path, store.keys)
            too_old = _age_s(record.created_at) > settings.keep_days * DAY_S
        except CheckpointStoreCorrupt:
            too_old = False  # a record that fails its check is kept, so `verify` can name it
        if seq != keep_newest and (too_many or too_old):
            doomed.append(path)
        else:
            kept.append(path)
    while _usage_after(store, kept) > settings.max_store_bytes and len(kept) > 1:
        doomed.append(kept.pop(0))
    for path in doomed:
        path.unlink(missing_ok=True)
    _collect(store, kept)
    atomic_write(store.root / USAGE, str(_usage_after(store, kept)).encode(), durable=False)
    return [f"cp-{int(p.stem)}" for p in doomed]


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
