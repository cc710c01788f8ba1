"""Forks on stacked lower layers, at random: a workspace changed at random between forks, forks made
now or from an earlier checkpoint, kept or discarded, written in; the stack kept short so that whole
layers are made again (from one no fork uses, or from nothing). After every step each fork shows
exactly its checkpoint (setuid and setgid bits never carried), a fork's ``changes`` are exactly what
was written in it, and nothing written in a fork reaches the project or the store. Kernel overlayfs,
no container needed."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.checkpoints.scan import Entry
from canal.host.forks import ForkStore
from tests.treesnap import Tree, tree
from tests.workspace_changes import CHANGES, files, fill

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")
STEPS = 25


@pytest.fixture
def forks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ForkStore, Path]]:
    from canal.host.forks import layers

    monkeypatch.setattr(layers, "MAX_STACK", 4)  # whole layers are made again within the run
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("*.log\n")
    store = CheckpointStore(tmp_path / "state" / "checkpoints", ws, CheckpointSettings(),
                            Keys("k", {"k": b"k" * 32}), watch=True)
    forks = ForkStore(tmp_path / "state" / "forks", store)
    yield forks, ws
    for fork in forks.list():  # unmounted, even when the test failed
        forks.discard(fork.name)
    store.close()


def shown(root: Path, entries: dict[str, Entry]) -> Tree:
    """The checkpoint's part of a tree (what a fork carries besides is the project's, as it is)."""
    return {p: v for p, v in tree(root).items() if p in entries}


def expected(snapshot: Tree, entries: dict[str, Entry]) -> Tree:
    """What a fork shows of a checkpoint: files with their permission bits only (a stored object has
    no setuid, setgid or sticky bit), folders without setuid and setgid."""
    out = {}
    for path, (kind, mode, uid, gid, data) in snapshot.items():
        if path in entries:
            mode = mode & 0o777 if kind == "f" else mode & ~0o6000 if kind == "d" else mode
            out[path] = (kind, mode, uid, gid, data)
    return out


def write_in(merged: Path, entries: dict[str, Entry], rng: random.Random) -> dict[str, str]:
    """Write a few things in a fork's workspace; returns each path and the change it must show as."""
    done: dict[str, str] = {}
    present = [p for p in files(merged) if not p.is_symlink() and p.name != ".gitignore"
               and str(p.relative_to(merged)) in entries]
    if present:
        path = rng.choice(present)
        path.write_bytes(path.read_bytes() + b"written in the fork\n")
        done[str(path.relative_to(merged))] = "modified"
    if len(present) > 1:
        path = rng.choice([p for p in present if str(p.relative_to(merged)) not in done])
        path.unlink()
        done[str(path.relative_to(merged))] = "deleted"
    (merged / "made-in-fork.txt").write_text("new\n")
    done["made-in-fork.txt"] = "added"
    return done


def make_fork(store: ForkStore, ws: Path, name: str, from_id: str | None) -> dict[str, Entry]:
    """A fork now (what it shows: exactly the project, the checkpoint's part without privilege bits)
    or of an earlier checkpoint; its entries. Either way its changes are nothing it did."""
    before = tree(ws)
    if from_id is not None:  # after a command's checkpoint: a path no checkpoint holds is carried as
        store.checkpoints.take(kind="run")  # it is now
    fork = store.create(name, from_id=from_id)
    entries = store.checkpoints.read_manifest(fork.manifest)
    found = {c.path: c.kind for c in store.changes(name).changes}
    if from_id is None:
        assert tree(store.workspace(name)) == {**before, **expected(before, entries)}
        assert found == {}
    else:  # an older checkpoint gets the paths no checkpoint holds as they are now (documented), even
        # in a folder that checkpoint does not have
        assert all(kind == "added" and path not in entries for path, kind in found.items())
    stack = store.layers.stack(fork.manifest)
    assert stack is not None
    assert len(stack) <= 4
    return entries


def written_in(store: ForkStore, ws: Path, name: str, entries: dict[str, Entry], rng: random.Random) -> None:
    """Its changes are exactly what was written in it; the project and the stored objects untouched."""
    project = tree(ws)
    done = write_in(store.workspace(name), entries, rng)
    assert {c.path: c.kind for c in store.changes(name).changes} == done
    assert tree(ws) == project
    for entry in entries.values():
        if entry[0] == "f":
            store.checkpoints.objects.verify(entry[6])


@pytest.mark.parametrize("seed", range(6))
def test_forks_on_stacked_layers_show_exactly_their_checkpoint(forks: tuple[ForkStore, Path],
                                                              seed: int) -> None:
    store, ws = forks
    rng = random.Random(seed)
    for d in ("a", "a/b", "c"):
        (ws / d).mkdir()
        fill(ws / d, rng, 3)
    live: dict[str, tuple[str, Tree]] = {}  # fork -> (its manifest, what it must go on showing)
    bases: list[str] = []
    for step in range(STEPS):
        for _ in range(rng.choice([1, 2])):
            rng.choice(CHANGES)(ws, rng)
        name = f"f{step}"
        now = rng.random() < 0.6 or not bases
        entries = make_fork(store, ws, name, None if now else rng.choice(bases))
        manifest = store.get(name).manifest
        bases.append(store.get(name).base)
        if now and rng.random() < 0.3:
            written_in(store, ws, name, entries, rng)
            store.discard(name)
        else:
            live[name] = (manifest, shown(store.workspace(name), entries))
        for other in [n for n in live if rng.random() < 0.3]:
            store.discard(other)
            del live[other]
        for other, (kept, seen) in live.items():  # no layer a fork uses ever changed
            assert shown(store.workspace(other), store.checkpoints.read_manifest(kept)) == seen, (step, other)
    held = set()
    for kept, _ in live.values():
        held.update(store.layers.stack(kept) or [])
    assert held <= set(store.layers.names())


def test_a_fork_of_a_tree_removed_and_made_again_hides_what_was_in_it(forks: tuple[ForkStore, Path]) -> None:
    """``rm -rf d && mkdir d``: the layer below still holds d's old entries; whiteouts hide them."""
    store, ws = forks
    (ws / "d" / "deep").mkdir(parents=True)
    (ws / "d" / "deep" / "old.txt").write_text("old\n")
    (ws / "d" / "keep.txt").write_text("keep\n")
    store.create("a")
    shutil.rmtree(ws / "d")
    (ws / "d").mkdir()
    (ws / "d" / "keep.txt").write_text("keep\n")
    (ws / "d" / "deep").write_text("a file where a folder was\n")
    fork = store.create("b")
    assert store.layers.stack(fork.manifest) == [fork.manifest, store.get("a").manifest]
    assert tree(store.workspace("b")) == tree(ws)
    assert tree(store.workspace("a"))["d/deep/old.txt"][4] == b"old\n"


def test_a_fork_mounted_again_shows_the_checkpoints_folders(forks: tuple[ForkStore, Path]) -> None:
    """The carried layer lies above the checkpoint's: its folders must have the checkpoint's mode, also
    when a fork made before that (its folders as mkdir made them) is mounted again after a reboot."""
    from canal.host.forks import overlay

    store, ws = forks
    (ws / "src").mkdir()
    (ws / "src").chmod(0o750)
    (ws / "src" / "a.py").write_text("a\n")
    (ws / "src" / "run.log").write_text("gitignored: carried\n")
    store.create("a")
    carried = store.folder("a") / "ignored" / "src"
    assert carried.stat().st_mode & 0o7777 == 0o750
    assert (store.workspace("a") / "src").stat().st_mode & 0o7777 == 0o750
    overlay.unmount(store.workspace("a"))
    carried.chmod(0o755)  # as mkdir made it before the carried layer lay above
    store.ensure_mounted("a")
    assert (store.workspace("a") / "src").stat().st_mode & 0o7777 == 0o750
    assert (store.workspace("a") / "src" / "run.log").read_text() == "gitignored: carried\n"
    assert store.changes("a").changes == []


def test_a_spare_layer_never_takes_a_held_layer_with_it(forks: tuple[ForkStore, Path]) -> None:
    """Making a whole layer from a spare removes the deltas stacked on that spare; a layer a fork holds
    whose own stack cannot be read (what it stands on is gone) is not one of them and stays."""
    store, ws = forks
    (ws / "a.txt").write_text("a\n")
    store.create("a")
    spare = store.list()[0].manifest
    store.discard("a")  # its layer stays: the newest layer's stack is kept for the next fork
    assert store.layers.path(spare).is_dir()
    held = "f" * 64
    store.layers.path(held).mkdir()
    (store.layers.root / f"{held}.below").write_text("e" * 64)  # stands on a layer that is gone
    os.utime(store.layers.path(held), ns=(1, 1))  # older than the spare: the spare is looked at first
    assert store.layers.stack(held) is None
    found = store.layers._spare(store.layers._held([held]))
    assert found is not None
    assert found[0] == store.layers.path(spare)
    assert store.layers.path(held).is_dir()
