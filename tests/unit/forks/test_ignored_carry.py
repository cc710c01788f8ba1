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
