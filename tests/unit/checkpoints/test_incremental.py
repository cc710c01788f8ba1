"""The watched store's bookkeeping follows what changed (rescan.py: the touched paths, each folder's
list of entries, the totals amended, the delta built from the touched paths); it must give exactly
what a walk of everything gives. Random sequences of changes, each seed a different one; after every
few changes the watched store's checkpoint and its state are compared with a walk of everything."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.checkpoints.scan import Scanner, ScanResult
from tests.workspace_changes import CHANGES, fill

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
KEYS = Keys("k", {"k": b"k" * 32})
SETTINGS = CheckpointSettings(max_file_bytes=3000)  # some files over the cap: not covered, and said
STEPS = 30


def walk(ws: Path, walker: CheckpointStore) -> ScanResult:
    """The workspace walked whole, nothing stored (files hashed), with the walking store's stat cache
    only for what it decides (a path covered once stays covered: a walk from nothing would leave out
    a folder a .gitignore names now, which the checkpoints before covered). Made before the walking
    store's own checkpoint, from the same cache that one stands on."""
    assert walker._cache is not None
    return Scanner(ws, SETTINGS, None, walker._cache[2]).scan()


def assert_state_is(store: CheckpointStore, walked: ScanResult) -> None:
    state = store.observer._state
    assert state is not None
    assert state.entries == walked.entries
    assert (state.files, state.bytes) == (walked.files, walked.bytes)
    # the same paths left out; the reason is the one the folder's last listing gave (a file over the
    # cap that a .gitignore names since says "over the size cap" until its folder is listed again)
    assert sorted(p for p, _ in state.not_covered) == sorted(p for p, _ in walked.not_covered)
    assert set(state.frames) == set(walked.frames)
    assert {f: sorted(k) for f, k in state.kids.items()} == {f: sorted(k) for f, k in walked.kids.items()}


@pytest.mark.parametrize("seed", range(12))
def test_incremental_bookkeeping_is_a_walk_from_scratch(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    for d in ("a", "a/b", "c", "build"):
        (ws / d).mkdir()
        fill(ws / d, rng, 3)
    watched = CheckpointStore(tmp_path / "watched", ws, SETTINGS, KEYS, watch=True)
    walker = CheckpointStore(tmp_path / "walker", ws, SETTINGS, KEYS)
    watched.take(kind="run")
    walker.take(kind="run")
    partial = 0
    try:
        for step in range(STEPS):
            for _ in range(rng.choice([1, 1, 2, 3])):
                rng.choice(CHANGES)(ws, rng)
            walked = walk(ws, walker)
            mine, theirs = watched.take(kind="run", command=f"step {step}"), walker.take(kind="run")
            partial += watched.watch_note == ""
            assert watched.manifest(mine) == walker.manifest(theirs), step
            assert mine.manifest == theirs.manifest  # the same delta, byte for byte
            assert (mine.files, mine.bytes) == (theirs.files, theirs.bytes), step
            assert mine.changes == theirs.changes, step
            assert mine.not_covered_total == theirs.not_covered_total
            assert_state_is(watched, walked)
    finally:
        watched.close()
    assert partial >= STEPS // 3  # most checkpoints amended the state rather than walking everything
