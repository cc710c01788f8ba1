"""Pruning off the command path: the store the server keeps (``watch=True``) prunes in a thread of its
own, holding the project's lock only to decide what goes and to delete it, so a command's checkpoint
never waits for the whole tree to be read. Whatever it deletes, no checkpoint kept (or taken while it
ran) uses; whatever no kept checkpoint uses, it deletes."""

from __future__ import annotations

import logging
import random
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys, sweep
from canal.host.checkpoints.records import read_index, read_manifest

KEYS = Keys("k", {"k": b"k" * 32})
SETTINGS = CheckpointSettings(keep=3, floor_count=1, floor_hours=0)
watching = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    for i in range(20):
        (ws / "src" / f"f{i}.txt").write_text(f"file {i}\n")
    return ws


@pytest.fixture
def watched(tmp_path: Path, ws: Path) -> Iterator[CheckpointStore]:
    store = CheckpointStore(tmp_path / "store", ws, SETTINGS, KEYS, watch=True)
    yield store
    store.close()


class Gate:
    """Holds a background prune at its survey (the part that runs without the lock) until released."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        real: Callable[..., Any] = sweep.survey

        def held(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                self.entered.set()
                assert self.release.wait(30), "the test never released the prune"
            return real(*args, **kwargs)

        monkeypatch.setattr(sweep, "survey", held)


def live_objects(store: CheckpointStore) -> set[str]:
    """What a kept checkpoint, a fork's pin, the store's stat cache or its index stands on: every
    state read whole (the plain way, as retention did before it learned to read less)."""
    names = {cp.manifest for cp in store.list()} | store.pinned()
    if store._cache is not None:
        names.add(store._cache[0])
    loaded = read_index(store.index_path, store.settings_hash, store.keys)
    if loaded is not None:
        names.add(loaded[0])
    return {e[6] for name in names for e in read_manifest(store.manifests_dir, name).values() if e[0] == "f"}


def on_disk(store: CheckpointStore) -> set[str]:
    return {name for name, _ in store.objects.names()}


def take_until_pruning(store: CheckpointStore, ws: Path, gate: Gate) -> int:
    """Checkpoints, one file changed before each, until a background prune is under way."""
    for i in range(40):
        (ws / "src" / "f0.txt").write_text(f"step {i}\n")
        store.take(kind="run", command=f"step {i}")
        if gate.entered.wait(0.05 if i > SETTINGS.keep else 0):
            return i
    pytest.fail("no prune started in 40 checkpoints")


@watching
def test_a_command_does_not_wait_for_the_prune(watched: CheckpointStore, ws: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate(monkeypatch)
    take_until_pruning(watched, ws, gate)
    assert len(watched.list()) <= SETTINGS.keep + 1  # what goes was decided and its records removed
    for i in range(5):  # the prune is still held: checkpoints go on being taken beside it
        (ws / "src" / "f1.txt").write_text(f"meanwhile {i}\n")
        watched.take(kind="run", command=f"meanwhile {i}")
    gate.release.set()
    watched.settle()
    assert on_disk(watched) == live_objects(watched)  # nothing kept lost, nothing pruned left behind
    newest = watched.list()[-1]
    (ws / "src" / "f1.txt").write_text("after\n")
    watched.undo(newest.id)
    assert (ws / "src" / "f1.txt").read_text() == "meanwhile 4\n"


@watching
def test_a_file_stored_again_while_the_prune_runs_is_kept(watched: CheckpointStore, ws: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate(monkeypatch)
    (ws / "src" / "f2.txt").write_text("the old words\n")
    watched.take(kind="run", command="write the old words")
    (ws / "src" / "f2.txt").write_text("new words\n")
    take_until_pruning(watched, ws, gate)  # the one checkpoint with the old words is pruned
    (ws / "src" / "f2.txt").write_text("the old words\n")  # the same bytes: the object is stored already
    again = watched.take(kind="run", command="write the old words again")
    gate.release.set()
    watched.settle()
    (ws / "src" / "f2.txt").write_text("gone\n")
    watched.undo(again.id)
    assert (ws / "src" / "f2.txt").read_text() == "the old words\n"
    assert on_disk(watched) == live_objects(watched)


@watching
def test_a_prune_that_fails_is_logged_and_the_next_one_runs(watched: CheckpointStore, ws: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    real = sweep.survey
    failures = [OSError(28, "No space left on device")]

    def failing(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep, "survey", failing)
    with caplog.at_level(logging.WARNING, logger="canal.checkpoints"):
        for i in range(30):
            (ws / "src" / "f3.txt").write_text(f"{i}\n")
            watched.take(kind="run", command=f"step {i}")
            watched.settle()
    assert not failures
    assert any("pruning" in r.getMessage() and "No space left" in r.getMessage() for r in caplog.records)
    assert len(watched.list()) <= SETTINGS.keep + 1
    assert on_disk(watched) == live_objects(watched)


@pytest.mark.parametrize("watch", [False, pytest.param(True, marks=watching)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruning_deletes_exactly_what_no_kept_checkpoint_uses(tmp_path: Path, ws: Path, watch: bool,
                                                              seed: int) -> None:
    """Random histories: files written (often back to earlier bytes), deleted, and undone to older
    checkpoints (so deltas branch); pins held and released. After every prune the objects on disk
    are exactly those some kept state uses."""
    rng = random.Random(seed)
    store = CheckpointStore(tmp_path / "store", ws, CheckpointSettings(keep=4, floor_count=2, floor_hours=0),
                            KEYS, watch=watch)
    words = [f"words {n}\n" for n in range(5)]
    names = [f"src/f{i}.txt" for i in range(6)] + ["new/a.txt", "new/b.txt"]
    try:
        for step in range(120):
            before = {cp.id for cp in store.list()}
            roll = rng.random()
            if roll < 0.1 and before:
                store.undo(rng.choice(sorted(before)))
            elif roll < 0.15 and before:
                store.pin(f"fork-{step % 3}", store.get(rng.choice(sorted(before))).manifest)
            elif roll < 0.2:
                store.pin(f"fork-{step % 3}", None)
            else:
                path = ws / rng.choice(names)
                if rng.random() < 0.2 and path.exists():
                    path.unlink()
                else:
                    path.parent.mkdir(exist_ok=True)
                    path.write_text(rng.choice(words))
                store.take(kind="run", command=f"step {step}")
            store.settle()
            after = {cp.id for cp in store.list()}
            live = live_objects(store)
            assert live <= on_disk(store), f"step {step}: a kept state lost objects"
            if before - after:
                assert on_disk(store) == live, f"step {step}: pruned objects left behind"
    finally:
        store.close()


# -- the full manifest that starts a new chain, written off the command path --------------------------
@pytest.fixture
def full_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread that wrote each full manifest of the store under test ("store"; a delta,
    or the walker's manifest, is not counted)."""
    from canal.host.checkpoints import records

    seen: list[str] = []
    real: Callable[..., Any] = records._put

    def spy(folder: Path, doc: Any, durable: bool) -> Any:
        if "entries" in doc and folder.parent.name == "store":
            seen.append(threading.current_thread().name)
        return real(folder, doc, durable)

    monkeypatch.setattr(records, "_put", spy)
    return seen


def walk(tmp_path: Path, ws: Path) -> dict[str, Any]:
    """The workspace as a store that walks everything sees it."""
    walker = CheckpointStore(tmp_path / "walker", ws, CheckpointSettings(), KEYS)
    return walker.manifest(walker.take(kind="run"))


def chain_length(store: CheckpointStore, name: str) -> int:
    from canal.host.checkpoints.records import manifest_chain

    return len(manifest_chain(store.manifests_dir, name))


@watching
def test_the_next_full_manifest_is_written_off_the_command_path(tmp_path: Path, ws: Path,
                                                                 full_writes: list[str]) -> None:
    from canal.host.checkpoints.records import MAX_DEPTH

    store = CheckpointStore(tmp_path / "store", ws, CheckpointSettings(), KEYS, watch=True)
    try:
        store.take(kind="run")
        assert full_writes == ["MainThread"]  # the first checkpoint: nothing to stand on
        for i in range(3 * MAX_DEPTH):
            (ws / "src" / f"f{i % 20}.txt").write_text(f"round {i}\n")
            cp = store.take(kind="run", command=f"step {i}")
            store.settle()
            assert read_manifest(store.manifests_dir, cp.manifest) == walk(tmp_path, ws)
            assert chain_length(store, cp.manifest) <= MAX_DEPTH + 1
        assert full_writes[0] == "MainThread"
        assert len(full_writes) >= 3
        assert set(full_writes[1:]) == {"canal-checkpoint-upkeep"}
    finally:
        store.close()


@watching
def test_a_full_manifest_for_a_state_gone_by_is_stood_on_through_a_delta(
        tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's checkpoint lands while the full manifest is written: that newer state is written
    as a delta of the full one, and the next delta stands on it (never the full one alone)."""
    from canal.host.checkpoints import pruning
    from canal.host.checkpoints.records import MAX_CHAIN, MAX_DEPTH

    store = CheckpointStore(tmp_path / "store", ws, CheckpointSettings(), KEYS, watch=True)
    raced: list[str] = []
    real: Callable[..., Any] = pruning.write_manifest

    def racing(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if not raced:  # once: a command lands between the write and the switch
            (ws / "src" / "f0.txt").write_text("landed meanwhile\n")
            raced.append(store.take(kind="run", command="meanwhile").manifest)
        return out

    monkeypatch.setattr(pruning, "write_manifest", racing)
    broken: list[str] = []
    real_rebase: Callable[..., Any] = pruning.rebase

    def checked(st: CheckpointStore) -> None:  # right after each switch: the state the next delta
        real_rebase(st)  # stands on holds exactly the entries of the manifest it names
        name, _, items = st._cache or ("", 0, {})
        if name and read_manifest(st.manifests_dir, name) != {p: it[1] for p, it in items.items()}:
            broken.append(name)

    monkeypatch.setattr(pruning, "rebase", checked)
    try:
        store.take(kind="run")
        lengths = []
        for i in range(MAX_DEPTH + 3):
            (ws / "src" / f"f{1 + i % 19}.txt").write_text(f"round {i}\n")
            cp = store.take(kind="run", command=f"step {i}")
            store.settle()
            lengths.append(chain_length(store, cp.manifest))
            newest = store.list()[-1]  # cp, or the one that landed meanwhile
            assert read_manifest(store.manifests_dir, newest.manifest) == walk(tmp_path, ws)
        assert broken == []
        assert raced
        assert chain_length(store, raced[0]) == MAX_DEPTH + 2
        assert max(lengths) <= MAX_CHAIN + 1
        assert lengths[-1] < MAX_DEPTH  # the chain was cut all the same
    finally:
        store.close()


@watching
def test_a_full_manifest_swept_before_it_is_stood_on_is_not_used(tmp_path: Path, ws: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.host.checkpoints import pruning
    from canal.host.checkpoints.records import MAX_DEPTH

    store = CheckpointStore(tmp_path / "store", ws, CheckpointSettings(), KEYS, watch=True)
    real: Callable[..., Any] = pruning.write_manifest
    swept: list[str] = []

    def swept_at_once(*args: Any, **kwargs: Any) -> Any:
        name, depth = real(*args, **kwargs)
        if not swept:  # what a prune on the command path (or another process's) does to a new file
            (store.manifests_dir / f"{name}.z").unlink()
            swept.append(name)
        return name, depth

    monkeypatch.setattr(pruning, "write_manifest", swept_at_once)
    from canal.host.checkpoints import scan as scan_module

    listed: list[str] = []
    real_folder = scan_module.Scanner._folder

    def spy(self: Any, rel: str, *args: Any) -> None:
        if self.root == ws:
            listed.append(rel)
        real_folder(self, rel, *args)

    monkeypatch.setattr(scan_module.Scanner, "_folder", spy)
    try:
        store.take(kind="run")
        for i in range(MAX_DEPTH + 3):
            (ws / "src" / f"f{i % 20}.txt").write_text(f"round {i}\n")
            listed.clear()
            cp = store.take(kind="run", command=f"step {i}")
            assert listed == ["src"]  # the watch still vouches: no walk of everything
            store.settle()
            assert read_manifest(store.manifests_dir, cp.manifest) == walk(tmp_path, ws)
        assert swept
        assert all(cp.manifest != swept[0] for cp in store.list())
    finally:
        store.close()


@pytest.fixture
def index_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The thread that wrote each stat cache (index.json) of a store."""
    from canal.host.checkpoints import store as store_module

    threads: list[str] = []
    real: Callable[..., Any] = store_module.CheckpointStore._write_index

    def spy(self: CheckpointStore, *args: Any, **kwargs: Any) -> None:
        threads.append(threading.current_thread().name)
        real(self, *args, **kwargs)

    monkeypatch.setattr(store_module.CheckpointStore, "_write_index", spy)
    return threads


def index_is_the_state(store: CheckpointStore) -> None:
    loaded = read_index(store.index_path, store.settings_hash, store.keys)
    assert loaded is not None
    assert store._cache is not None
    assert loaded[0] == store._cache[0]
    assert loaded[2] == store._cache[2]
    assert read_manifest(store.manifests_dir, loaded[0]) == {p: it[1] for p, it in loaded[2].items()}


@watching
def test_the_stat_cache_is_written_off_the_command_path(tmp_path: Path, ws: Path, index_writes: list[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.host.checkpoints import store as store_module

    store = CheckpointStore(tmp_path / "store", ws, CheckpointSettings(), KEYS, watch=True)
    try:
        store.take(kind="run")
        store.settle()
        index_is_the_state(store)
        monkeypatch.setattr(store_module, "INDEX_EVERY_S", 0.0)  # due at every checkpoint
        for i in range(3):
            (ws / "src" / "f3.txt").write_text(f"round {i}\n")
            store.take(kind="run", command=f"step {i}")
            store.settle()
            index_is_the_state(store)
        assert index_writes == ["canal-checkpoint-upkeep"] * 4
    finally:
        store.close()


@watching
def test_a_stat_cache_naming_a_swept_manifest_is_not_written(tmp_path: Path, ws: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Made without the lock, the stat cache is written under it only if the manifest it names is
    still there: the next checkpoint after a restart writes its delta on that manifest."""
    from canal.host.checkpoints import pruning
    from canal.host.checkpoints import store as store_module

    store = CheckpointStore(tmp_path / "store", ws, CheckpointSettings(), KEYS, watch=True)
    real: Callable[..., Any] = pruning.index_bytes
    swept: list[str] = []
    sweeping = threading.Event()

    def swept_meanwhile(settings_hash: str, manifest: str, *args: Any, **kwargs: Any) -> Any:
        out = real(settings_hash, manifest, *args, **kwargs)
        if sweeping.is_set() and not swept:  # what a prune on the command path could do meanwhile
            (store.manifests_dir / f"{manifest}.z").unlink()
            swept.append(manifest)
        return out

    monkeypatch.setattr(pruning, "index_bytes", swept_meanwhile)
    try:
        store.take(kind="run")
        store.settle()
        before = store.index_path.read_bytes()
        sweeping.set()
        monkeypatch.setattr(store_module, "INDEX_EVERY_S", 0.0)
        (ws / "src" / "f4.txt").write_text("changed\n")
        store.take(kind="run")
        store.settle()
        assert swept
        assert store.index_path.read_bytes() == before  # not written: it would name nothing
        (ws / "src" / "f5.txt").write_text("changed again\n")
        store.take(kind="run")  # still behind, asked again: written for the state after
        store.settle()
        index_is_the_state(store)
    finally:
        store.close()


@watching
def test_the_background_prune_announces_what_it_removes_first(tmp_path: Path, ws: Path) -> None:
    """The server's store tells ``on_prune`` (the audit log) the ids before they go; a refusal keeps them."""
    told: list[list[str]] = []
    store = CheckpointStore(tmp_path / "store", ws, SETTINGS, KEYS, watch=True, on_prune=told.append)
    try:
        taken = []
        for i in range(12):
            (ws / "src" / "f1.txt").write_text(f"change {i}\n")
            taken.append(store.take(kind="run", command=f"c{i}").id)
            store.settle()
        kept = {c.id for c in store.list()}
        assert [cp for ids in told for cp in ids] == [cp for cp in taken if cp not in kept]
        assert told
    finally:
        store.close()

    def refuse(ids: list[str]) -> None:
        raise OSError(28, "No space left on device")

    refusing = CheckpointStore(tmp_path / "store", ws, SETTINGS, KEYS, watch=True, on_prune=refuse)
    try:
        before = [c.id for c in refusing.list()]
        for i in range(6):
            (ws / "src" / "f1.txt").write_text(f"more {i}\n")
            before.append(refusing.take(kind="run", command=f"m{i}").id)
            refusing.settle()
        assert [c.id for c in refusing.list()] == before  # nothing went unrecorded
    finally:
        refusing.close()
