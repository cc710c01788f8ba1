"""A fork carries the paths no checkpoint holds: hard links on one filesystem, a copy otherwise; never
Canal's own state folder, and never through a symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.host.checkpoints.scan import Entry
from canal.host.forks.ignored import carry
from tests.error_codes import raises_code


def _project(tmp_path: Path) -> tuple[Path, dict[str, Entry]]:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("a\n")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "tool").write_text("#!/bin/sh\n")
    (project / ".venv" / "bin" / "tool").chmod(0o755)
    (project / ".venv" / "bin" / "py").symlink_to("/usr/bin/python3")
    (project / "src" / "out").symlink_to(tmp_path / "outside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s\n")
    (project / ".canal").mkdir()
    (project / ".canal" / "key").write_text("k\n")
    d: Entry = ("d", 0o755, 0, 0, 0, 0, "")  # type: ignore[assignment]
    f: Entry = ("f", 0o644, 2, 0, 0, 0, "x")  # type: ignore[assignment]
    return project, {"src": d, "src/a.py": f}


def test_linked_on_one_filesystem_and_state_left_out(tmp_path: Path) -> None:
    project, entries = _project(tmp_path)
    dest = tmp_path / "ignored"
    got = carry(project, entries, dest, link=True, protected=[project / ".canal" / "key"])
    assert got.way == "linked"
    assert got.files == 1
    tool = dest / ".venv" / "bin" / "tool"
    assert tool.stat().st_ino == (project / ".venv" / "bin" / "tool").stat().st_ino
    assert os.readlink(dest / ".venv" / "bin" / "py") == "/usr/bin/python3"
    assert os.readlink(dest / "src" / "out") == str(tmp_path / "outside")  # the link, not what it names
    assert not (dest / ".canal").exists()
    assert not (dest / "src" / "a.py").exists()  # the checkpoint holds it


def test_copied_when_asked(tmp_path: Path) -> None:
    project, entries = _project(tmp_path)
    dest = tmp_path / "copy"
    got = carry(project, entries, dest, link=False)
    assert got.way == "copied"
    tool = dest / ".venv" / "bin" / "tool"
    assert tool.stat().st_ino != (project / ".venv" / "bin" / "tool").stat().st_ino
    assert tool.read_text() == "#!/bin/sh\n"
    assert tool.stat().st_mode & 0o777 == 0o755


def test_a_copy_that_does_not_fit_is_refused_before_anything_is_made(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from canal.host.forks import ignored
    from canal.host.forks.errors import FORK_NO_SPACE

    project, entries = _project(tmp_path)
    dest = tmp_path / "copy"
    dest.mkdir()
    monkeypatch.setattr(ignored.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(1, 1, 0))  # type: ignore[attr-defined]
    with raises_code(FORK_NO_SPACE) as caught:
        carry(project, entries, dest, link=False)
    assert caught.value.code == "FORK_NO_SPACE"
    assert caught.value.next
    assert list(dest.iterdir()) == []


@pytest.mark.parametrize("watch", [False, True])
def test_the_paths_a_checkpoint_left_out_are_what_a_listing_finds(tmp_path: Path, watch: bool) -> None:
    """A fork of the last checkpoint carries the paths its scan left out (CheckpointStore.not_covered)
    instead of listing every covered folder again: the same paths, the same tree, in folders made with
    the checkpoint's own modes."""
    from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
    from tests.treesnap import tree

    project, _ = _project(tmp_path)
    (project / ".gitignore").write_text(".venv/\n*.log\nbuild/\n")
    (project / "src" / "deep" / "build").mkdir(parents=True)
    (project / "src" / "deep").chmod(0o750)
    (project / "src" / "deep" / "build" / "out.o").write_bytes(b"o")
    (project / "src" / "run.log").write_text("log\n")
    (project / "big.bin").write_bytes(b"b" * 200)
    os.mkfifo(project / "src" / "pipe")
    settings = CheckpointSettings(max_file_bytes=100, exclude=(".canal/",))
    store = CheckpointStore(tmp_path / "state", project, settings, Keys("k", {"k": b"k" * 32}), watch=watch)
    try:
        store.take(kind="run")
        (project / "src" / "deep" / "later.log").write_text("left out by the next checkpoint\n")
        cp = store.take(kind="fork")  # (the watched store's state amended, not walked)
        entries = store.manifest(cp)
        left = store.not_covered(cp.manifest)
        assert left is not None
        protected = [project / ".canal"]
        listed = carry(project, entries, tmp_path / "listed", link=True, protected=protected)
        known = carry(project, entries, tmp_path / "known", link=True, protected=protected, left=left)
        assert known == listed
        assert tree(tmp_path / "known") == tree(tmp_path / "listed")
        assert (tmp_path / "known" / "src" / "deep" / "build" / "out.o").read_bytes() == b"o"
        assert (tmp_path / "known" / "src" / "deep" / "later.log").is_file()
        assert os.lstat(tmp_path / "known" / "src" / "deep").st_mode & 0o777 == 0o750
        assert not (tmp_path / "known" / ".canal").exists()
    finally:
        store.close()
