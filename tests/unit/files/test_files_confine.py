from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from canal.host.files import Workspace, edit_file, view_path, write_file
from canal.host.files.errors import PathOutsideWorkspace, SymlinkEscape
from canal.host.files.fileio import read_file


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    f = tmp_path / "host.txt"
    f.write_text("host secret\n")
    return f


@pytest.mark.parametrize("given", ["../host.txt", "sub/../../host.txt"])
def test_dotdot_out_of_the_workspace_is_refused(ws: Workspace, host_file: Path, given: str) -> None:
    with pytest.raises(PathOutsideWorkspace) as err:
        ws.locate(given)
    assert err.value.code == "PATH_OUTSIDE_WORKSPACE"


def test_absolute_path_outside_is_refused(ws: Workspace, host_file: Path) -> None:
    with pytest.raises(PathOutsideWorkspace):
        view_path(ws, host_file)


def test_dotdot_that_stays_inside_is_fine(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "a").mkdir()
    assert ws.locate("a/../b.txt").display == "b.txt"
    assert ws.locate(ws_dir / "a" / "x", base=Path("/nowhere")).display == "a/x"
    assert ws.locate("x", base=ws_dir / "a").display == "a/x"
    assert ws.locate(".").is_root


def test_final_symlink_out_is_refused_for_reading_and_writing(ws: Workspace, ws_dir: Path,
                                                              host_file: Path) -> None:
    (ws_dir / "link").symlink_to(host_file)
    with pytest.raises(SymlinkEscape):
        view_path(ws, "link")
    with pytest.raises(SymlinkEscape):
        edit_file(ws, "link", "host", "pwned")
    with pytest.raises(SymlinkEscape):
        write_file(ws, "link", b"pwned")
    assert host_file.read_text() == "host secret\n"
    assert ws.locate("link").display == "link"  # the link itself can be named (to remove it)


def test_symlinked_folder_out_is_refused(ws: Workspace, ws_dir: Path, host_file: Path) -> None:
    (ws_dir / "out").symlink_to(host_file.parent)
    with pytest.raises(SymlinkEscape):
        write_file(ws, "out/host.txt", b"pwned")
    with pytest.raises(SymlinkEscape):
        write_file(ws, "out/new.txt", b"pwned")
    assert host_file.read_text() == "host secret\n"
    assert not (host_file.parent / "new.txt").exists()


def test_folder_swapped_for_symlink_after_check_is_caught(ws: Workspace, ws_dir: Path,
                                                          host_file: Path) -> None:
    (ws_dir / "sub").mkdir()
    (ws_dir / "sub" / "host.txt").write_text("inside\n")
    loc = ws.locate("sub/host.txt", follow=True)
    shutil.rmtree(ws_dir / "sub")
    os.symlink(host_file.parent, ws_dir / "sub")  # what a racing sandbox would do
    with pytest.raises(SymlinkEscape):
        read_file(loc)


def test_workspace_reached_through_a_symlinked_alias(tmp_path: Path, ws_dir: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(ws_dir)
    ws = Workspace.at(alias)
    (ws_dir / "f.txt").write_text("x\n")
    assert ws.locate(alias / "f.txt").display == "f.txt"
    assert ws.locate(ws_dir / "f.txt").display == "f.txt"
