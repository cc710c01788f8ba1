"""canal.core.fsutil: private folders."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from canal.core.fsutil import private_dir


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_dir_creates_the_folder_and_tightens_a_loose_folder(tmp_path: Path) -> None:
    made = private_dir(tmp_path / "a" / "b")
    assert made == tmp_path / "a" / "b"
    assert mode(made) == 0o700
    os.chmod(made, 0o755)
    private_dir(made)
    assert mode(made) == 0o700


def test_private_dir_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(FileExistsError):
        private_dir(tmp_path / "f")
    with pytest.raises(NotADirectoryError):
        private_dir(tmp_path / "f" / "sub")
