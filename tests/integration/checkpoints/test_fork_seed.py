"""A fork's lower layers: each checkpoint forked gets a layer, a delta stacked on the newest layer there
was (only what changed is linked), and the fork's stat cache is put together from the layers' keys:
what the fork shows must be exactly the checkpoint, and every key what the fork's workspace shows, or
``changes`` reads again files the fork never touched. Kernel overlayfs, no container needed."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
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
    assert not (store.folder(name) / "index").exists()  # put together when changes first needs it
    entries = store.checkpoints.read_manifest(fork.manifest)
    items = store._seed_items(fork, entries)
    assert set(items) == set(entries)
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
    store.create("b", from_id=first.base)  # the same layers
    seeded_keys_shown(store, "b")
    (ws / "d1" / "f1.txt").write_text("changed\n")
    store.create("c")  # a new layer stacked on a's
    seeded_keys_shown(store, "c")
    store.create("d", from_id=first.base)
    seeded_keys_shown(store, "d")
    store.discard("c")  # its layer stays: the newest, the next one stacks on it
    (ws / "d2" / "f2.txt").write_text("changed too\n")
    store.create("e")
    seeded_keys_shown(store, "e")
    store.discard("e")
    store.discard("a")
    store.create("f", from_id=first.base)
    seeded_keys_shown(store, "f")
    for name in "bdf":
        assert store.changes(name).changes == []
        store.discard(name)


def test_a_key_gone_stale_is_read_again_never_trusted(forks: tuple[ForkStore, Path]) -> None:
    """A layer linking an object the layers below link too (the same bytes at another path) moves that
    inode's ctime: the keys kept for the older paths no longer match, and those files are read again."""
    store, ws = forks
    store.create("a")
    store.changes("a")  # the layer's keys are read and kept
    (ws / "d1" / "copy.txt").write_text("same\n")  # the bytes of every deep/same.txt: one object
    store.create("b")
    entries = store.checkpoints.read_manifest(store.get("b").manifest)
    items = store._seed_items(store.get("b"), entries)
    stale = sorted(p for p, (key, e) in items.items()
                   if e[0] != "d" and key != _key(os.lstat(store.workspace("b") / p)))
    assert stale == ["d0/deep/same.txt", "d1/deep/same.txt", "d2/deep/same.txt"]
    (store.workspace("b") / "d2" / "deep" / "same.txt").write_text("same\n")  # rewritten, same bytes
    assert store.changes("b").changes == []
    (store.workspace("b") / "d0" / "deep" / "same.txt").write_text("other\n")
    assert [c.path for c in store.changes("b").changes] == ["d0/deep/same.txt"]


def _key(st: os.stat_result) -> tuple[int, ...]:
    return st.st_mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_uid, st.st_gid


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


def test_a_layer_stacked_on_the_last_one_shows_exactly_the_checkpoint(
        forks: tuple[ForkStore, Path], tmp_path: Path) -> None:
    store, ws = forks
    old = store.create("a")
    before = tree(store.workspace("a"))
    store.discard("a")  # its layer is kept: the next one stacks on it
    reshape(ws)
    fork = store.create("b")
    assert store.layers.stack(fork.manifest) == [fork.manifest, old.manifest]
    seeded_keys_shown(store, "b")
    assert store.changes("b").changes == []
    assert tree(store.workspace("b")) == tree(ws)
    assert tree(store.workspace("b")) != before
    delta = store.lowers / fork.manifest
    held = sorted(str(p.relative_to(delta)) for p in delta.rglob("*"))
    assert held == ["d0", "d0/deep", "d0/deep/same.txt", "d0/f0.txt", "d0/run.sh", "d1", "d2", "d2/deep",
                    "d2/f2.txt", "d3", "d3/new.txt", "link", "link/in.txt"]  # what changed, and the folders
    assert stat.S_ISCHR(os.lstat(delta / "d1").st_mode)  # gone: a whiteout
    entries = store.checkpoints.read_manifest(fork.manifest)
    for path, entry in entries.items():
        if entry[0] == "f" and (delta / path).exists():  # the stored object itself, never a copy
            assert os.lstat(delta / path).st_ino == os.lstat(store.checkpoints.objects.path(entry[6])).st_ino
    whole = tmp_path / "whole"
    overlay.materialize(whole, entries, store.checkpoints.objects, (0, 0))
    assert tree(store.workspace("b")) == tree(whole)


def test_a_layer_a_fork_uses_is_never_changed(forks: tuple[ForkStore, Path]) -> None:
    store, ws = forks
    first = store.create("a")
    store.create("b", from_id=first.base)
    store.discard("a")  # b still uses the layer
    seen = tree(store.workspace("b"))
    reshape(ws)
    store.create("c")  # stacked on b's layer, which stays as it was
    assert tree(store.workspace("b")) == seen
    assert store.changes("b").changes == []
    assert (store.lowers / first.manifest).is_dir()
    store.discard("b")
    assert tree(store.workspace("c")) == tree(ws)
    assert (store.lowers / first.manifest).is_dir()  # under c's layer


def test_past_the_stack_a_whole_layer_is_made_from_one_no_fork_uses(
        forks: tuple[ForkStore, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.host.forks import layers

    monkeypatch.setattr(layers, "MAX_STACK", 3)
    store, ws = forks
    made: list[str] = []
    whole = 0
    for i in range(7):
        (ws / "d0" / f"round{i}.txt").write_text(f"round {i}\n")
        fork = store.create(f"r{i}")
        made.append(fork.manifest)
        if i == 0:
            whole = os.stat(store.lowers / fork.manifest).st_ino
        if i == 3:  # the stack was full: the whole layer no fork uses was taken and made this one
            assert store.layers.stack(fork.manifest) == [fork.manifest]
            assert os.stat(store.lowers / fork.manifest).st_ino == whole
            assert not (store.lowers / made[0]).exists()
        stack = store.layers.stack(fork.manifest)
        assert stack is not None
        assert len(stack) <= 3
        assert tree(store.workspace(f"r{i}")) == tree(ws)
        assert store.changes(f"r{i}").changes == []
        store.discard(f"r{i}")
    assert [len(store.layers.stack(m) or []) for m in made[-1:]] == [1 + (len(made) - 1) % 3]
    assert len(store.layers.names()) <= 3  # the newest stack, nothing else
    pins = {p.name for p in (store.checkpoints.root / "pins").iterdir()}
    assert pins == {f"@lower-{m}" for m in store.layers.names()}
