from __future__ import annotations

import stat
from pathlib import Path

import pytest

from canal.cli.words import say as cli_words
from canal.host.files import BinaryView, DirView, TextView, Workspace, view_path, write_file
from canal.host.files.errors import FILE_CHANGED, INVALID_RANGE, IsADirectory
from canal.host.ports import Redactor
from tests.error_codes import raises_code


def _text(result: object) -> TextView:
    assert isinstance(result, TextView)
    return result


def test_view_numbers_lines_and_says_what_it_shows(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    view = _text(view_path(ws, "f.txt", start=3, end=4))
    assert view.lines == ["line 3", "line 4"]
    shown = view.to_text(cli_words)
    assert shown == ("     3\tline 3\n     4\tline 4\n"
                     "[f.txt: showing 3-4 of 10 lines | next: canal view f.txt --range 5:6]")
    assert view.to_text().endswith("| next: lines 5:6]")  # no front end's words: the lines to ask for
    whole = _text(view_path(ws, "f.txt"))
    assert (whole.start, whole.end, whole.total_lines) == (1, 10, 10)
    capped = _text(view_path(ws, "f.txt", max_lines=4))
    assert (capped.start, capped.end) == (1, 4)
    assert _text(view_path(ws, "f.txt", start=9, end=99)).lines == ["line 9", "line 10"]


def test_view_bad_range(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "f.txt").write_text("a\nb\n")
    with raises_code(INVALID_RANGE):
        view_path(ws, "f.txt", start=5)
    with raises_code(INVALID_RANGE):
        view_path(ws, "f.txt", start=2, end=1)


def test_view_redacts_and_lists_folders(ws: Workspace, ws_dir: Path, redactor: Redactor) -> None:
    (ws_dir / "s.env").write_text("A=1\nKEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n")
    view = _text(view_path(ws, "s.env", redactor=redactor))
    assert view.lines == ["A=1", "KEY=[REDACTED_SECRET:stripe:1]"]
    (ws_dir / "d").mkdir()
    (ws_dir / "ln").symlink_to("s.env")
    listing = view_path(ws, ".")
    assert isinstance(listing, DirView)
    assert listing.to_text() == "d/\nln -> s.env\ns.env  (41 bytes)\n[.: folder, showing 3 of 3 entries]"


def test_view_binary_guard(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    view = view_path(ws, "img.png")
    assert isinstance(view, BinaryView)
    assert view.size == 10
    assert "binary file, 10 bytes, not shown" in view.to_text()


def test_write_creates_with_folders_and_reports_lines(ws: Workspace, ws_dir: Path) -> None:
    result = write_file(ws, "new/dir/f.txt", b"a\nb\n")
    assert (ws_dir / "new" / "dir" / "f.txt").read_bytes() == b"a\nb\n"
    assert (result.status, result.lines, result.bytes, result.backup_id) == ("created", 2, 4, None)
    assert result.diff is not None
    assert result.diff.startswith("--- /dev/null\n+++ b/new/dir/f.txt\n")


def test_write_replace_backs_up_keeps_mode_and_is_idempotent(ws: Workspace, ws_dir: Path) -> None:
    f = ws_dir / "f.sh"
    f.write_text("old\n")
    f.chmod(0o700)
    backups: list[Path] = []

    def backup(path: Path) -> str:
        backups.append(path)
        return "t-backup"

    result = write_file(ws, "f.sh", b"new\n", backup=backup)
    assert (result.status, result.backup_id) == ("replaced", "t-backup")
    assert result.diff == "--- a/f.sh\n+++ b/f.sh\n@@ -1 +1 @@\n-old\n+new\n"
    assert backups == [f]
    assert stat.S_IMODE(f.stat().st_mode) == 0o700
    again = write_file(ws, "f.sh", b"new\n", backup=backup)
    assert again.status == "unchanged"
    assert len(backups) == 1


def test_write_refuses_a_folder(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "d").mkdir()
    with pytest.raises(IsADirectory):
        write_file(ws, "d", b"x")


def test_write_races_with_a_creator(ws: Workspace, ws_dir: Path) -> None:
    def backup(path: Path) -> str:  # runs between the read and the write
        path.write_text("surprise\n")
        return "t-x"

    (ws_dir / "f").write_text("old\n")
    with raises_code(FILE_CHANGED):
        write_file(ws, "f", b"new\n", backup=backup)
    assert (ws_dir / "f").read_text() == "surprise\n"


def test_view_a_subfolder(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "d" / "e").mkdir(parents=True)
    (ws_dir / "d" / "f.txt").write_text("x")
    listing = view_path(ws, "d")
    assert isinstance(listing, DirView)
    assert [(e.name, e.kind, e.size) for e in listing.entries] == [("e", "dir", None), ("f.txt", "file", 1)]
