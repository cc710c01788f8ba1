"""The watched store's bookkeeping follows what changed (rescan.py: the touched paths, each folder's
list of entries, the totals amended, the delta built from the touched paths); it must give exactly
what a walk of everything gives. Random sequences of changes, each seed a different one; after every
few changes the watched store's checkpoint and its state are compared with a walk from scratch."""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.checkpoints.scan import Scanner, ScanResult

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
KEYS = Keys("k", {"k": b"k" * 32})
SETTINGS = CheckpointSettings(max_file_bytes=3000)  # some files over the cap: not covered, and said
STEPS = 30


def folders(ws: Path) -> list[Path]:
    return sorted(p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink())


def files(ws: Path) -> list[Path]:
    return sorted(p for p in ws.rglob("*") if p.is_symlink() or p.is_file())


def _fill(folder: Path, rng: random.Random, count: int) -> None:
    for i in range(count):
        size = rng.choice([0, 5, 40, 4000])
        (folder / f"n{rng.randrange(10_000)}-{i}.txt").write_bytes(rng.randbytes(size))


def create(ws: Path, rng: random.Random) -> None:
    folder = rng.choice([ws, *folders(ws)])
    path = folder / rng.choice(["a.txt", "b.log", "c.bin", f"x{rng.randrange(100)}"])  # *.log: gitignored
    if path.is_symlink():
        path.unlink()
    if not path.is_dir():
        path.write_bytes(rng.randbytes(rng.choice([0, 3, 100, 5000])))


def modify(ws: Path, rng: random.Random) -> None:
    choices = [p for p in files(ws) if not p.is_symlink() and p.name != ".gitignore"]
    if choices:
        path = rng.choice(choices)
        size = path.stat().st_size if rng.random() < 0.5 else rng.randrange(0, 4000)
        path.write_bytes(rng.randbytes(size))  # same size or not, new bytes


def delete(ws: Path, rng: random.Random) -> None:
    if choices := files(ws):
        rng.choice(choices).unlink()


def make_tree(ws: Path, rng: random.Random) -> None:
    top = rng.choice([ws, *folders(ws)]) / f"t{rng.randrange(1000)}"
    deep = top / "in" / "deeper"
    deep.mkdir(parents=True, exist_ok=True)
    _fill(top, rng, 2)
    _fill(deep, rng, 3)


def remove_tree(ws: Path, rng: random.Random) -> None:
    if choices := folders(ws):
        shutil.rmtree(rng.choice(choices))


def again(ws: Path, rng: random.Random) -> None:
    """``rm -rf d && mkdir d``: a known path, a new inode, other content."""
    if choices := folders(ws):
        folder = rng.choice(choices)
        shutil.rmtree(folder)
        folder.mkdir()
        if rng.random() < 0.7:
            _fill(folder, rng, rng.randrange(1, 4))
        if rng.random() < 0.5:
            (folder / "sub").mkdir()
            _fill(folder / "sub", rng, 1)


def rename_folder(ws: Path, rng: random.Random) -> None:
    if choices := folders(ws):
        folder = rng.choice(choices)
        folder.rename(folder.with_name(folder.name + "r"))


def move_file(ws: Path, rng: random.Random) -> None:
    if choices := files(ws):
        target = rng.choice([ws, *folders(ws)]) / f"m{rng.randrange(100)}"
        if not target.is_dir() or target.is_symlink():
            os.replace(rng.choice(choices), target)


def chmod(ws: Path, rng: random.Random) -> None:
    if choices := [p for p in [*files(ws), *folders(ws)] if not p.is_symlink()]:
        path = rng.choice(choices)
        path.chmod(rng.choice([0o700, 0o755]) if path.is_dir() else rng.choice([0o600, 0o644, 0o755]))


def symlink(ws: Path, rng: random.Random) -> None:
    folder = rng.choice([ws, *folders(ws)])
    link = folder / f"l{rng.randrange(4)}"
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        shutil.rmtree(link)
    link.symlink_to(rng.choice(["a.txt", "../x", "nowhere", "."]))


def swap_kind(ws: Path, rng: random.Random) -> None:
    """A file becomes a folder, or a folder a file, at the same path."""
    choices = [*files(ws), *folders(ws)]
    if not choices:
        return
    path = rng.choice(choices)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
        path.write_bytes(b"a file now")
    else:
        path.unlink()
        path.mkdir()
        _fill(path, rng, 1)


def gitignore(ws: Path, rng: random.Random) -> None:
    """Rules that leave out more, or less (a path covered before stays covered)."""
    path = rng.choice([ws, *folders(ws)]) / ".gitignore"
    if path.is_symlink():
        path.unlink()
    if not path.is_dir():
        path.write_text(rng.choice(["*.log\n", "*.bin\nsub/\n", "", "x*\n!x1\n"]))


def hard_link(ws: Path, rng: random.Random) -> None:
    if choices := [p for p in files(ws) if not p.is_symlink()]:
        target = rng.choice([ws, *folders(ws)]) / f"h{rng.randrange(1000)}"
        if not target.exists():
            os.link(rng.choice(choices), target)


CHANGES: list[Callable[[Path, random.Random], None]] = [
    create, create, modify, modify, delete, make_tree, remove_tree, again, again, rename_folder, move_file,
    chmod, symlink, swap_kind, hard_link, gitignore]


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
        _fill(ws / d, rng, 3)
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
