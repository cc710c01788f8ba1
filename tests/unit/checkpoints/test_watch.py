"""A watched store (the server's) lists again only the folders its inotify watch named, and nothing when
nothing happened; it must never miss a change. Each case changes the workspace one way, then checks the
watched store's checkpoint against a walk of everything by a store with no watch."""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.checkpoints import scan as scan_module
from canal.host.checkpoints.scan import Scanner

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
KEYS = Keys("k", {"k": b"k" * 32})


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for d in range(6):
        (ws / f"d{d}").mkdir(parents=True)
        for f in range(5):
            (ws / f"d{d}" / f"f{f}.txt").write_text(f"{d}-{f}\n")
    (ws / "d0" / "link").symlink_to("f0.txt")
    (ws / "d0" / "empty" / "deeper").mkdir(parents=True)
    return ws


@pytest.fixture
def watched(tmp_path: Path, ws: Path) -> Iterator[CheckpointStore]:
    store = CheckpointStore(tmp_path / "watched", ws, CheckpointSettings(), KEYS, watch=True)
    store.take(kind="run")  # the first checkpoint walks everything and arms the watch
    assert store.watch_note == ""
    walker(tmp_path, ws).take(kind="run")  # the same history, walked each time
    yield store
    store.close()


def walker(tmp_path: Path, ws: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "walker", ws, CheckpointSettings(), KEYS)


@pytest.fixture
def folders_listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    real = Scanner._folder

    def spy(self: Scanner, rel: str, *args: object) -> None:
        if threading.current_thread() is threading.main_thread():  # on the command path
            listed.append(rel)
        real(self, rel, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module.Scanner, "_folder", spy)
    return listed


def same_as_a_walk(tmp_path: Path, ws: Path, store: CheckpointStore,
                   listed: list[str] | None = None) -> list[str]:
    """Take a checkpoint with the watched store and with a store of the same history that walks
    everything; they must agree. Returns the folders the watched store listed."""
    cp = store.take(kind="run")
    seen = list(listed or [])
    walked = walker(tmp_path, ws)
    assert store.manifest(cp) == walked.manifest(walked.take(kind="run"))
    return seen


def test_nothing_changed_lists_no_folder(watched: CheckpointStore, folders_listed: list[str]) -> None:
    before = watched.list()[-1]
    after = watched.take(kind="run")
    assert folders_listed == []
    assert after.manifest == before.manifest
    assert after.changes.total == 0


def test_a_changed_file_lists_only_its_folder(tmp_path: Path, ws: Path, watched: CheckpointStore,
                                              folders_listed: list[str]) -> None:
    (ws / "d3" / "f1.txt").write_text("changed\n")
    assert same_as_a_walk(tmp_path, ws, watched, folders_listed) == ["d3"]


def _append_via_link(inside: Path, outside: Path) -> None:
    os.link(inside, outside)  # a name the watch does not know: the inode's own watch still reports
    with outside.open("a") as fh:
        fh.write("more\n")


def _retarget(link: Path, target: str) -> None:
    link.unlink()
    link.symlink_to(target)


CHANGES: dict[str, Callable[[Path, Path], object]] = {
    "write": lambda ws, _: (ws / "d1" / "f0.txt").write_text("new bytes\n"),
    "same size, same second": lambda ws, _: [(ws / "d1" / "f1.txt").write_text(x) for x in ("a\n", "b\n")],
    "append through a hard link outside": lambda ws, out: _append_via_link(ws / "d2" / "f0.txt", out / "x"),
    "hard link inside": lambda ws, _: os.link(ws / "d2" / "f1.txt", ws / "d3" / "again.txt"),
    "rename a file": lambda ws, _: os.rename(ws / "d2" / "f2.txt", ws / "d4" / "moved.txt"),
    "rename over a file": lambda ws, _: os.replace(ws / "d2" / "f3.txt", ws / "d2" / "f4.txt"),
    "rename a folder": lambda ws, _: os.rename(ws / "d5", ws / "d5b"),
    "chmod": lambda ws, _: os.chmod(ws / "d1" / "f2.txt", 0o600),
    "chmod a folder": lambda ws, _: os.chmod(ws / "d1", 0o700),
    "delete": lambda ws, _: (ws / "d1" / "f3.txt").unlink(),
    "remove a tree": lambda ws, _: shutil.rmtree(ws / "d4"),
    "new folder with files": lambda ws, _: (
        (ws / "d0" / "new" / "deep").mkdir(parents=True), (ws / "d0" / "new" / "deep" / "x").write_text("x")),
    "retarget a symlink": lambda ws, _: _retarget(ws / "d0" / "link", "f1.txt"),
    "truncate": lambda ws, _: os.truncate(ws / "d1" / "f4.txt", 0),
    "a folder becomes a file": lambda ws, _: (shutil.rmtree(ws / "d3"), (ws / "d3").write_text("file now")),
    "gitignore": lambda ws, _: (ws / ".gitignore").write_text("d2/\n"),
    "an empty folder made again with a file": lambda ws, _: _again(ws / "d0" / "empty" / "deeper"),
    "a tree of empty folders made again": lambda ws, _: _again(ws / "d0" / "empty"),
    "a folder made again by another process": lambda ws, _: subprocess.run(
        ["sh", "-c", "rm -rf d0/empty && mkdir -p d0/empty/deeper && echo x > d0/empty/deeper/x"],
        cwd=ws, check=True),
}


def _again(folder: Path) -> None:
    """Remove a folder of empty folders and make it again, with a file at the bottom: its path is
    known to the last state, its inode is new, and no file inside it raised an event."""
    shutil.rmtree(folder)
    (folder / "deeper").mkdir(parents=True) if folder.name == "empty" else folder.mkdir()
    bottom = folder / "deeper" if folder.name == "empty" else folder
    (bottom / "x").write_text("made again\n")


def write_everywhere(ws: Path) -> None:
    """A file into every folder there is now: each must be watched, those made again at a known path
    (a new inode) included."""
    for folder in sorted({ws, *(p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink())}):
        (folder / "later.txt").write_text("written after the change\n")


@pytest.mark.parametrize("change", list(CHANGES))
def test_no_change_is_missed(tmp_path: Path, ws: Path, watched: CheckpointStore, change: str) -> None:
    CHANGES[change](ws, tmp_path)
    same_as_a_walk(tmp_path, ws, watched)
    write_everywhere(ws)  # the watch still vouches afterwards, in every folder
    same_as_a_walk(tmp_path, ws, watched)


def test_writes_through_a_memory_mapping_are_seen_when_it_closes(tmp_path: Path, ws: Path,
                                                                 watched: CheckpointStore) -> None:
    path = ws / "d1" / "f0.txt"
    st = path.stat()
    with path.open("r+b") as fh, mmap.mmap(fh.fileno(), 0) as mapped:
        mapped[0:1] = b"X"  # no write(2): no IN_MODIFY; the close says it was open for writing
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and its times as they were
    same_as_a_walk(tmp_path, ws, watched)
    assert watched.manifest(watched.list()[-1])["d1/f0.txt"][6] != \
        watched.manifest(watched.list()[0])["d1/f0.txt"][6]


def test_a_queue_overflow_falls_back_to_a_walk(tmp_path: Path, ws: Path, watched: CheckpointStore) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    a, b = ws / "d1" / "f0.txt", ws / "d1" / "f1.txt"
    with a.open("ab", buffering=0) as fa, b.open("ab", buffering=0) as fb:
        for _ in range(limit // 2 + 10):  # alternating files: consecutive events never coalesce
            fa.write(b".")
            fb.write(b".")
    (ws / "d4" / "f4.txt").write_text("after the overflow: its event is dropped\n")
    same_as_a_walk(tmp_path, ws, watched)
    assert "overflowed" in watched.watch_note
    (ws / "d2" / "f0.txt").write_text("the new watch vouches again\n")
    same_as_a_walk(tmp_path, ws, watched)
    assert watched.watch_note == ""


def test_a_diff_does_not_use_up_what_the_watch_saw(tmp_path: Path, ws: Path,
                                                   watched: CheckpointStore) -> None:
    (ws / "d2" / "f2.txt").write_text("changed before a diff\n")
    assert [c.path for c in watched.diff().changes] == ["d2/f2.txt"]
    same_as_a_walk(tmp_path, ws, watched)


def test_changes_made_by_another_process_are_seen(tmp_path: Path, ws: Path, watched: CheckpointStore) -> None:
    script = "mv d1/f0.txt d2/x && chmod 700 d3/f0.txt && echo hi >> d4/f1.txt && ln d5/f0.txt d5/h"
    subprocess.run(["sh", "-c", script], cwd=ws, check=True)
    same_as_a_walk(tmp_path, ws, watched)


def test_a_store_that_cannot_watch_walks_every_time(tmp_path: Path, ws: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    folders_listed: list[str]) -> None:
    from canal.host.checkpoints import observe as observe_module

    monkeypatch.setattr(observe_module, "open_watch", lambda: (None, "inotify is not available (test)"))
    store = CheckpointStore(tmp_path / "nowatch", ws, CheckpointSettings(), KEYS, watch=True)
    store.take(kind="run")
    folders_listed.clear()
    store.take(kind="run")
    assert len(folders_listed) == 9  # the root, its six folders, d0/empty and d0/empty/deeper: a walk
    assert "not available" in store.watch_note


def test_a_new_store_walks_what_changed_while_none_watched(tmp_path: Path, ws: Path,
                                                           watched: CheckpointStore,
                                                           folders_listed: list[str]) -> None:
    """A server restart: what changed while no process watched is found by a walk, never assumed."""
    watched.close()
    (ws / "d2" / "f2.txt").write_text("changed while the server was down\n")
    (ws / "d0" / "empty" / "deeper").rmdir()
    again = CheckpointStore(tmp_path / "watched", ws, CheckpointSettings(), KEYS, watch=True)
    try:
        folders_listed.clear()
        assert len(same_as_a_walk(tmp_path, ws, again, folders_listed)) == 8  # root, 6 folders, d0/empty
        (ws / "d1" / "f1.txt").write_text("and the new watch vouches\n")
        folders_listed.clear()
        assert same_as_a_walk(tmp_path, ws, again, folders_listed) == ["d1"]
    finally:
        again.close()


def test_the_watch_limit_falls_back_to_a_walk_and_is_not_retried_at_once(
        tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, folders_listed: list[str]) -> None:
    from canal.host.checkpoints import watch as watch_module

    added: list[str] = []

    class Limited(watch_module.INotify):  # type: ignore[misc,name-defined]
        def add_watch(self, path: str, mask: int) -> int:
            added.append(path)
            if len(added) > 5:
                raise OSError(errno.ENOSPC, "No space left on device")
            return int(super().add_watch(path, mask))

    monkeypatch.setattr(watch_module, "INotify", Limited)
    store = CheckpointStore(tmp_path / "limited", ws, CheckpointSettings(), KEYS, watch=True)
    try:
        store.take(kind="run")
        assert "max_user_watches" in store.watch_note
        armed = len(added)
        (ws / "d4" / "f0.txt").write_text("seen by the walk\n")
        folders_listed.clear()
        assert len(same_as_a_walk(tmp_path, ws, store, folders_listed)) == 9  # a walk
        assert len(added) == armed  # and no new watch armed only to be lost again
    finally:
        store.close()


def test_after_an_undo_the_next_checkpoint_lists_only_what_the_undo_wrote(
        tmp_path: Path, ws: Path, watched: CheckpointStore, folders_listed: list[str]) -> None:
    """Canal's own writes raise the watch's events like anyone's: an undo costs the next command no walk."""
    old = (ws / "d3" / "f1.txt").read_bytes()
    (ws / "d3" / "f1.txt").write_text("changed\n")
    watched.take(kind="run", command="write")
    watched.undo()
    assert (ws / "d3" / "f1.txt").read_bytes() == old
    folders_listed.clear()
    assert same_as_a_walk(tmp_path, ws, watched, folders_listed) == ["d3"]
    assert watched.watch_note == ""


@pytest.mark.parametrize("change", list(CHANGES))
def test_an_undo_of_any_change_leaves_a_watch_that_misses_nothing(tmp_path: Path, ws: Path,
                                                                  watched: CheckpointStore,
                                                                  change: str) -> None:
    """Undo each kind of change; the next checkpoint equals a walk, and so does one after a further
    change in every folder the undo made again (the watch covers what the undo wrote)."""
    start = watched.list()[-1]
    CHANGES[change](ws, tmp_path)
    watched.take(kind="run", command=change)
    watched.undo(start.id)
    same_as_a_walk(tmp_path, ws, watched)
    assert watched.manifest(watched.list()[-1]) == watched.manifest(start)
    write_everywhere(ws)
    same_as_a_walk(tmp_path, ws, watched)


def test_the_minutes_walk_runs_beside_the_commands(tmp_path: Path, ws: Path, watched: CheckpointStore,
                                                   folders_listed: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """What the watch cannot see (a write through a mapping still open) is found by the walk made at
    least once a minute; in the server it runs beside the commands, and the next checkpoint reads it."""
    from canal.host.checkpoints import observe as observe_module

    monkeypatch.setattr(observe_module, "VERIFY_S", 0.0)  # the minute is always up
    time.sleep(0.1)  # files written within 50 ms of the first scan are read again by the first walk
    watched.take(kind="run")  # (git's racily clean rule), beside the commands too: let it settle
    watched.settle()
    watched.take(kind="run")
    watched.settle()
    path = ws / "d1" / "f0.txt"
    with path.open("r+b") as fh, mmap.mmap(fh.fileno(), 0) as mapped:
        mapped[0:1] = b"X"  # no event until the file is closed
        folders_listed.clear()
        unseen = watched.take(kind="run")
        assert folders_listed == [], watched.watch_note  # no walk on the command path
        assert watched.manifest(unseen)["d1/f0.txt"] == watched.manifest(watched.list()[0])["d1/f0.txt"]
        watched.settle()  # the walk beside it found the file
        folders_listed.clear()
        assert same_as_a_walk(tmp_path, ws, watched, folders_listed) == ["d1"]
        assert watched.watch_note == ""


def test_a_failed_walk_beside_the_commands_leaves_the_next_checkpoint_to_walk(
        tmp_path: Path, ws: Path, watched: CheckpointStore, folders_listed: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.host.checkpoints import observe as observe_module
    from canal.host.checkpoints import pruning

    class Failing(Scanner):
        def scan(self) -> Any:
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(pruning, "Scanner", Failing)
    monkeypatch.setattr(observe_module, "VERIFY_S", 0.0)
    watched.take(kind="run")
    watched.settle()
    monkeypatch.setattr(observe_module, "VERIFY_S", 60.0)
    (ws / "d2" / "f1.txt").write_text("changed\n")
    folders_listed.clear()
    assert len(same_as_a_walk(tmp_path, ws, watched, folders_listed)) == 9  # a walk of everything
    assert "beside the commands failed" in watched.watch_note


def test_a_file_back_under_the_size_cap_is_seen(tmp_path: Path, ws: Path) -> None:
    """A file that grew past the cap is left out, but it is still there: its watch must stay, so that
    its return under the cap is seen (it was forgotten with the paths gone, and the checkpoints after
    missed the file until the minute's walk)."""
    settings = CheckpointSettings(max_file_bytes=100)
    store = CheckpointStore(tmp_path / "capped", ws, settings, KEYS, watch=True)
    walked = CheckpointStore(tmp_path / "capped-walker", ws, settings, KEYS)
    try:
        store.take(kind="run")
        (ws / "d1" / "f0.txt").write_bytes(b"x" * 500)
        assert "d1/f0.txt" not in store.manifest(store.take(kind="run"))
        (ws / "d1" / "f0.txt").write_bytes(b"back under the cap\n")
        cp = store.take(kind="run")
        assert store.watch_note == ""
        assert store.manifest(cp) == walked.manifest(walked.take(kind="run"))
        assert "d1/f0.txt" in store.manifest(cp)
    finally:
        store.close()


def test_the_next_checkpoint_amends_a_copy_made_off_the_command_path(tmp_path: Path, ws: Path,
                                                                      watched: CheckpointStore) -> None:
    """The copy of the last state's index that a partial scan changes is made by the upkeep thread
    after the checkpoint (4-8 ms at 50,000 entries): the state itself stays as it was stored."""
    for i in range(3):
        watched.settle()
        assert watched.observer._copy is not None
        stored = watched.observer._state
        assert stored is not None
        source, made = watched.observer._copy
        assert source is stored.index
        assert made == stored.index
        assert made is not stored.index
        before = dict(stored.index)
        (ws / "d2" / f"f{i}.txt").write_text(f"changed {i}\n")
        same_as_a_walk(tmp_path, ws, watched)
        assert watched.observer._state is not None
        assert watched.observer._state.index is made  # amended, not copied again
        assert stored.index == before  # the state stored before is untouched
