from __future__ import annotations

import shutil
import time
from pathlib import Path

from canal.host.checkpoints import CHECKPOINT_NOT_FOUND
from canal.host.checkpoints.errors import CHECKPOINT_PRUNED
from tests.error_codes import raises_code
from tests.unit.checkpoints.conftest import MakeStore, tree


def test_undo_restores_bytes_modes_and_symlinks(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    before = tree(workspace)
    cp = store.take(kind="run", command="python3 -c rmtree")
    shutil.rmtree(workspace / "data")
    (workspace / "run.sh").chmod(0o644)
    (workspace / "src" / "main.py").write_text("changed\n")
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("/etc/passwd")
    (workspace / "new.txt").write_text("new\n")
    (workspace / "empty").rmdir()
    result = store.undo(cp.id)
    assert tree(workspace) == before
    assert result.restored_to == cp.id
    kinds = {c.path: c.kind for c in result.changes}
    assert kinds["new.txt"] == "deleted"
    assert kinds["data/blob.bin"] == "added"
    assert kinds["run.sh"] == "mode"
    assert kinds["link"] == "symlink"


def test_undo_takes_a_checkpoint_first_so_it_can_be_undone(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    cp = store.take(kind="run")
    (workspace / "src" / "main.py").write_text("work in progress\n")
    after = tree(workspace)
    result = store.undo(cp.id)
    assert (workspace / "src" / "main.py").read_text() == "print('hi')\n"
    store.undo(result.before_undo)
    assert tree(workspace) == after


def test_nothing_changed_shares_the_manifest_and_counts_no_change(workspace: Path,
                                                                  make_store: MakeStore) -> None:
    store = make_store()
    first = store.take(kind="run")
    second = store.take(kind="run")
    assert second.manifest == first.manifest
    assert second.changes.total == 0
    assert second.added_bytes == 0
    (workspace / "src" / "main.py").write_text("x = 1\n")
    third = make_store().take(kind="run")  # a new process: the stat cache comes from disk
    assert third.changes.modified == 1
    assert third.changes.paths == ["src/main.py"]


def test_a_file_written_just_before_a_scan_is_read_again_next_time(workspace: Path,
                                                                   make_store: MakeStore) -> None:
    """git's racily-clean rule: a second write in the same clock tick keeps the stat key, so a key
    taken that close to the scan is not trusted (on coarse-clock kernels the rewrite is invisible)."""
    store = make_store()
    (workspace / "f.txt").write_text("aaaa")
    store.take(kind="run")
    assert store._cache is not None
    assert store._cache[2]["f.txt"][0] is None  # not trusted: read again next time
    time.sleep(0.06)
    store.take(kind="run")
    assert store._cache[2]["f.txt"][0] is not None  # old enough now: the key is trusted


def test_unknown_and_pruned_ids_are_told_apart(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(keep=2, floor_hours=0, floor_count=1)
    for i in range(4):
        (workspace / "counter").write_text(str(i))
        store.take(kind="run")
    ids = [c.id for c in store.list()]
    assert ids == ["cp-3", "cp-4"]
    with raises_code(CHECKPOINT_PRUNED, match="pruned"):
        store.undo("cp-1")
    with raises_code(CHECKPOINT_NOT_FOUND, match="no checkpoint has that id"):
        store.undo("cp-99")
    with raises_code(CHECKPOINT_NOT_FOUND, match="no checkpoint has that id"):
        store.undo("bogus")


def test_pruning_deletes_objects_no_kept_checkpoint_uses(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(keep=1, floor_hours=0, floor_count=1)
    (workspace / "big").write_bytes(b"1" * 5000)
    store.take(kind="run")
    (workspace / "big").write_bytes(b"2" * 5000)
    store.take(kind="run")
    stored = {name for name, _ in store.objects.names()}
    assert not any(name.startswith(__import__("hashlib").sha256(b"1" * 5000).hexdigest()) for name in stored)
    assert [c.id for c in store.list()] == ["cp-2"]


def test_manifests_are_deltas_and_pruning_keeps_what_they_stand_on(workspace: Path,
                                                                    make_store: MakeStore) -> None:
    from canal.host.checkpoints.records import MAX_DEPTH, manifest_chain

    store = make_store(keep=5, floor_hours=0, floor_count=1)
    for i in range(MAX_DEPTH + 10):
        (workspace / "counter").write_text(f"{i}\n")
        store.take(kind="run")
    kept = store.list()
    assert [c.id for c in kept] == [f"cp-{n}" for n in range(MAX_DEPTH + 6, MAX_DEPTH + 11)]
    for cp in kept:
        assert len(manifest_chain(store.manifests_dir, cp.manifest)) <= MAX_DEPTH + 1
    oldest = kept[0]
    store.undo(oldest.id)
    assert (workspace / "counter").read_text() == f"{oldest.seq - 1}\n"
    assert (workspace / "src" / "main.py").read_text() == "print('hi')\n"


def test_differs_agrees_with_changes_on_random_pairs() -> None:
    """``differs`` (pick_undo's early-exit check) names a change exactly when ``changes`` does: times
    and owners alone are no change for either."""
    import random

    from canal.host.checkpoints import compare

    rng = random.Random(5)
    for _ in range(300):
        old = {f"p{i}": ("f", 0o644, i, 1, 0, 0, f"h{i}") for i in range(rng.randrange(0, 8))}
        new = dict(old)
        for _ in range(rng.randrange(0, 3)):
            how = rng.choice(["add", "drop", "time", "owner", "mode", "bytes", "kind"])
            path = f"p{rng.randrange(0, 9)}"
            entry = new.get(path, ("f", 0o644, 1, 1, 0, 0, "h"))
            if how == "drop":
                new.pop(path, None)
            elif how == "time":
                new[path] = (*entry[:3], entry[3] + 1, *entry[4:])
            elif how == "owner":
                new[path] = (*entry[:4], entry[4] + 1, *entry[5:])
            elif how == "mode":
                new[path] = (entry[0], 0o600, *entry[2:])
            elif how == "bytes":
                new[path] = (*entry[:6], entry[6] + "x")
            elif how == "kind":
                new[path] = ("l", *entry[1:])
            else:
                new[path] = entry
        assert compare.differs(old, new) == bool(compare.changes(old, new)), (old, new)


def test_a_full_manifest_encoded_in_chunks_is_canonical_byte_for_byte() -> None:
    """The server's thread encodes a full manifest a thousand entries at a time; the bytes (and so the
    name every delta and record uses) are those of ``canonical``."""
    import random

    from canal.host.checkpoints.records import CHUNK, canonical, canonical_manifest

    rng = random.Random(9)
    names = ["a", "b/c", "é/ü", "Z", "a b", "x\"y", "日本", "a/b/c/d"]
    for size in (0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7):
        entries = {f"{rng.choice(names)}/{i}-{rng.random()}": ["f", 420, i, 1, 0, 0, f"h{i}"]
                   for i in range(size)}
        doc = {"version": 1, "depth": 0, "entries": entries}
        assert canonical_manifest(doc) == canonical(doc)
    delta = {"version": 1, "parent": "p", "depth": 1, "set": {"a": ["f", 1, 1, 1, 0, 0, "h"]}, "del": []}
    assert canonical_manifest(delta) == canonical(delta)
