"""A fork's stat cache is seeded from its lower layer's keys (kept beside it while no lower layer was
made or removed since): every key must be what the fork's workspace shows, or ``changes`` reads again
files the fork never touched. Kernel overlayfs, no container needed."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.checkpoints.records import read_index
from canal.host.forks import ForkStore, overlay
from tests.treesnap import tree

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")


@pytest.fixture
def forks(tmp_path: Path) -> Iterator[tuple[ForkStore, Path]]:
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
    forks = ForkStore(tmp_path / "state" / "forks", store)
    yield forks, ws
    for fork in forks.list():  # unmounted, even when the test failed
        forks.discard(fork.name)


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


def reshape(ws: Path) -> None:
    """Every kind of difference a spare lower layer has to take on."""
    (ws / "d0" / "f0.txt").write_text("rewritten\n")  # new bytes
    (ws / "d0" / "run.sh").chmod(0o700)  # new mode, same bytes
    shutil.rmtree(ws / "d1")  # a folder gone
    (ws / "d2" / "deep").chmod(0o750)  # a folder's mode
    (ws / "link").unlink()
    (ws / "link").mkdir()  # a symlink became a folder
    (ws / "link" / "in.txt").write_text("in\n")
    (ws / "d2" / "f2.txt").unlink()
    (ws / "d2" / "f2.txt").symlink_to("../d0")  # a file became a symlink
    os.chown(ws / "d0" / "deep" / "same.txt", 1000, 1000)  # a new owner
    (ws / "d3").mkdir()
    (ws / "d3" / "new.txt").write_text("new\n")


def test_a_lower_layer_made_from_the_spare_is_the_one_built_whole(
        forks: tuple[ForkStore, Path], tmp_path: Path) -> None:
    store, ws = forks
    old = store.create("a")
    before = tree(store.workspace("a"))
    store.discard("a")  # its lower layer is kept as the spare
    assert (store.lowers / old.manifest).is_dir()
    reshape(ws)
    fork = store.create("b")  # made from the spare
    assert not (store.lowers / old.manifest).exists()
    seeded_keys_shown(store, "b")
    assert store.changes("b").changes == []
    entries = store.checkpoints.read_manifest(fork.manifest)
    whole = tmp_path / "whole"
    overlay.materialize(whole, entries, store.checkpoints.objects, (0, 0))
    lower = store.lowers / fork.manifest
    assert tree(lower) == tree(whole)
    for path, entry in entries.items():
        if entry[0] == "f":  # the stored object itself, never a copy of other bytes
            assert os.lstat(lower / path).st_ino == os.lstat(store.checkpoints.objects.path(entry[6])).st_ino
    assert tree(store.workspace("b")) == tree(ws)
    assert tree(store.workspace("b")) != before


def test_a_spare_is_never_a_lower_layer_a_fork_uses(forks: tuple[ForkStore, Path]) -> None:
    store, ws = forks
    first = store.create("a")
    store.create("b", from_id=first.base)
    store.discard("a")  # b still uses the lower layer: it is no spare
    seen = tree(store.workspace("b"))
    reshape(ws)
    store.create("c")
    assert tree(store.workspace("b")) == seen
    assert store.changes("b").changes == []
    assert (store.lowers / first.manifest).is_dir()
