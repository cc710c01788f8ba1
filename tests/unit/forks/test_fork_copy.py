"""The fallback where copy-on-write is not available: the fork is a full copy of the checkpoint, with
the same changes, conflicts and apply (no container needed to test the store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.forks import FORK_CONFLICT, ForkStore
from tests.error_codes import raises_code
from tests.treesnap import tree


@pytest.fixture
def forks(tmp_path: Path) -> tuple[ForkStore, Path]:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a = 1\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "link").symlink_to("src/a.py")
    store = CheckpointStore(tmp_path / "state" / "checkpoints", ws, CheckpointSettings(),
                            Keys("k", {"k": b"k" * 32}))
    return ForkStore(tmp_path / "state" / "forks", store), ws


def test_a_copy_fork_is_isolated_and_applies_through_the_same_path(forks: tuple[ForkStore, Path]) -> None:
    store, ws = forks
    before = tree(ws)
    fork = store.create("copy1", mode="copy")
    assert fork.mode == "copy"
    copy = store.workspace("copy1")
    assert tree(copy) == before
    (copy / "src" / "a.py").write_text("a = 2\n")
    (copy / "run.sh").unlink()
    (copy / "new.txt").write_text("n\n")
    assert tree(ws) == before
    assert {c.path: c.kind for c in store.changes("copy1").changes} == {
        "src/a.py": "modified", "run.sh": "deleted", "new.txt": "added"}
    result = store.apply("copy1")
    assert (ws / "src" / "a.py").read_text() == "a = 2\n"
    assert not (ws / "run.sh").exists()
    store.checkpoints.undo(result.checkpoint)
    assert tree(ws) == before


def test_copy_fork_conflicts_are_refused(forks: tuple[ForkStore, Path]) -> None:
    store, ws = forks
    store.create("copy2", mode="copy")
    (store.workspace("copy2") / "src" / "a.py").write_text("fork\n")
    (ws / "src" / "a.py").write_text("person\n")
    with raises_code(FORK_CONFLICT):
        store.apply("copy2")
    assert (ws / "src" / "a.py").read_text() == "person\n"
    store.discard("copy2")
    assert not store.folder("copy2").exists()
