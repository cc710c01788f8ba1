"""What pruning keeps and what it deletes: the manifests and objects the kept states stand on, and the
sweep of everything else.

A kept state's objects are found without building every state whole. Along a chain of deltas, a kept
manifest whose chain passes through another kept one differs from it only at the paths the deltas
between them touch, so only those are read; a kept manifest with no kept one below it is read whole,
once. The result is exactly the objects some kept state uses (tests/unit/checkpoints/test_pruning.py
compares it with reading every state whole).

A survey may run without the project's lock (the watched store's pruner does, so commands do not wait
for it): ``extend`` then adds, under the lock, the states taken since, and ``sweep`` deletes only what
the survey listed and no state uses.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from canal.host.checkpoints.errors import CheckpointStoreCorrupt
from canal.host.checkpoints.records import manifest_chain

if TYPE_CHECKING:
    from canal.host.checkpoints.store import CheckpointStore


@dataclass
class Survey:
    """The kept manifests (``names``), every part of their chains (``docs``), the objects their states
    use, and what was on disk when it was taken (only that may be deleted)."""

    names: set[str]
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)
    objects: dict[str, int] = field(default_factory=dict)  # object -> its size (the file's, in entries)
    listed: set[str] = field(default_factory=set)  # objects on disk
    manifests: list[str] = field(default_factory=list)  # manifest files on disk

    def usage(self) -> int:
        """Bytes the kept objects take, of those listed."""
        return sum(size for name, size in self.objects.items() if name in self.listed)


def roots(store: CheckpointStore) -> set[str]:
    """Manifests kept whatever the records say: forks' bases, the stat cache's (the next checkpoint's
    delta stands on it) in memory and on disk."""
    names = store.pinned()
    if store._cache is not None:
        names.add(store._cache[0])
    indexed = store.index_manifest()
    if indexed is not None:
        names.add(indexed)
    return names


def survey(store: CheckpointStore, names: Iterable[str]) -> Survey:
    """What the states of ``names`` use (a manifest that fails its check keeps nothing of its own, as
    its record does not: ``verify`` names it), then what is on disk."""
    found = Survey(names=set())
    _add(store, found, set(names), strict=False)
    found.listed = set(store.objects.listing())
    if store.manifests_dir.is_dir():
        found.manifests = [p.stem for p in store.manifests_dir.iterdir() if p.suffix == ".z"]
    return found


def extend(store: CheckpointStore, found: Survey, names: Iterable[str]) -> None:
    """Add the states of ``names`` (taken since the survey; under the lock). One that cannot be read
    raises: nothing is deleted rather than something a new checkpoint uses."""
    _add(store, found, set(names) - found.names, strict=True)


def sweep(store: CheckpointStore, found: Survey) -> int:
    """Delete what was listed and no state uses; returns the bytes of the objects kept."""
    for name in found.listed:
        if name not in found.objects:
            store.objects.remove(name)
    for name in found.manifests:
        if name not in found.docs:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(store.manifests_dir / f"{name}.z")
    return found.usage()


def _add(store: CheckpointStore, found: Survey, names: set[str], *, strict: bool) -> None:
    loaded: list[str] = []
    for name in sorted(names):
        try:
            chain = manifest_chain(store.manifests_dir, name, skip=set(found.docs))
        except CheckpointStoreCorrupt:
            if strict:
                raise
            continue
        found.docs.update(chain)
        loaded.append(name)
    stop = found.names | set(loaded)  # each of these has its whole state counted
    for name in loaded:
        found.objects.update(_changed_objects(found.docs, name, stop))
    found.names |= set(loaded)


def _changed_objects(docs: dict[str, dict[str, Any]], name: str, stop: set[str]) -> dict[str, int]:
    """The objects of ``name``'s state at the paths its deltas changed since the nearest kept manifest
    below it (every path when there is none)."""
    decided: dict[str, list[Any] | None] = {}  # path -> its entry in `name`'s state; None: deleted
    part = name
    while True:
        doc = docs[part]
        if "entries" in doc:
            for path, entry in doc["entries"].items():
                decided.setdefault(path, entry)
            break
        for path, entry in doc["set"].items():  # a delta's set and del never share a path
            decided.setdefault(path, entry)
        for path in doc["del"]:
            decided.setdefault(path, None)
        part = str(doc["parent"])
        if part in stop:
            break
    return {str(e[6]): int(e[2]) for e in decided.values() if e is not None and e[0] == "f"}
