"""Undo never deletes a file it has no copy of: a file over the size cap at the checkpoint, truncated
afterwards (so covered now, at 0 bytes), stays where it is, and the result says so."""

from __future__ import annotations

from pathlib import Path

from tests.unit.checkpoints.conftest import MakeStore


def test_undo_leaves_a_truncated_file_it_had_no_copy_of(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(max_file_bytes=3000)
    (workspace / "big.bin").write_bytes(b"x" * 5000)
    cp = store.take(kind="run", command=": > big.bin")
    assert cp.uncovered == ["big.bin"]
    (workspace / "big.bin").write_bytes(b"")
    (workspace / "made.txt").write_text("made after\n")
    result = store.undo(cp.id)
    assert (workspace / "big.bin").exists()
    assert not (workspace / "made.txt").exists()  # what it has a copy of (its absence) is restored
    assert [n.path for n in result.left_alone] == ["big.bin"]
