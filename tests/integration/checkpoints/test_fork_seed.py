"""A fork's stat cache is seeded from its lower layer's keys (kept beside it while no lower layer was
made or removed since): every key must be what the fork's workspace shows, or ``changes`` reads again
files the fork never touched. Kernel overlayfs, no container needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.runtime.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.runtime.checkpoints.records import read_index
from canal.runtime.forks import ForkStore

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")


@pytest.fixture
def forks(tmp_path: Path) -> tuple[ForkStore, Path]:
    ws = tmp_path / "ws"
    for i in range(3):
        (ws / f"d{i}" / "deep").mkdir(parents=True)
        (ws / f"d{i}" / f"f{i}.txt").write_text(f"file {i}\n")
        (ws / f"d{i}" / "deep" / "same.txt").write_text("same\n")  # one object, several links
    (ws / "d0" / "run.sh").write_text("#!/bin/sh\n")
    (ws / "d0" / "run.sh").chmod(0o755)
    (ws / "link").symlink_to("d0/f0.txt")
    store = CheckpointStore(tmp_path / "state" / "checkpoints", ws, CheckpointSettings(),
                            Keys("k", {"k": b"k" * 32}))
    return ForkStore(tmp_path / "state" / "forks", store), ws


def seeded_keys_shown(store: ForkStore, name: str) -> None:
    fork = store.get(name)
    cached = read_index(store.folder(name) / "index", fork.manifest, store.checkpoints.keys)
    assert cached is not None
    items = cached[2]
    assert set(items) == set(store.checkpoints.read_manifest(fork.manifest))
    merged = store.workspace(name)
    for path, (key, entry) in items.items():
        if entry[0] == "d":
            assert key is None
            continue
        st = os.lstat(merged / path)
        assert key == (st.st_mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_uid,
                       st.st_gid), path


def test_every_seeded_key_is_what_the_fork_shows_across_new_and_removed_lower_layers(
        forks: tuple[ForkStore, Path]) -> None:
    store, ws = forks
    first = store.create("a")
    seeded_keys_shown(store, "a")
    store.create("b", from_id=first.base)  # the lower layer's keys, kept from a
    seeded_keys_shown(store, "b")
    (ws / "d1" / "f1.txt").write_text("changed\n")
    store.create("c")  # a new lower layer links the shared objects again: their ctime moves
    seeded_keys_shown(store, "c")
    store.create("d", from_id=first.base)
    seeded_keys_shown(store, "d")
    store.discard("c")  # its lower layer goes: unlinks move the ctime again
    store.create("e", from_id=first.base)
    seeded_keys_shown(store, "e")
    for name in "abde":
        assert store.changes(name).changes == []
        store.discard(name)
