"""The runtime folder and the socket: ours alone, or refused with the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.client.errors import RUNTIME_DIR_UNSAFE
from canal.client.paths import ensure_private_dir, runtime_dir, server_paths
from tests.error_codes import raises_code


def test_folder_is_created_private(tmp_path: Path) -> None:
    folder = ensure_private_dir(tmp_path / "rt")
    assert folder.stat().st_mode & 0o777 == 0o700


def test_loose_folder_is_refused_with_the_chmod_fix(tmp_path: Path) -> None:
    folder = tmp_path / "rt"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    with raises_code(RUNTIME_DIR_UNSAFE) as caught:
        ensure_private_dir(folder)
    assert caught.value.code == "RUNTIME_DIR_UNSAFE"
    assert caught.value.hint == f"chmod 700 {folder}"
    assert folder.stat().st_mode & 0o777 == 0o755  # refused, never repaired behind the user's back


def test_symlinked_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "rt"
    link.symlink_to(real)
    with raises_code(RUNTIME_DIR_UNSAFE, match="not a folder"):
        ensure_private_dir(link)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user owns needs root")
def test_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "rt"
    folder.mkdir(mode=0o700)
    os.chown(folder, 4242, 4242)
    with raises_code(RUNTIME_DIR_UNSAFE, match="belongs to uid 4242") as caught:
        ensure_private_dir(folder)
    assert caught.value.hint.startswith(f"sudo rm -rf {folder}")


def test_default_folder_is_per_uid_under_tmp() -> None:
    assert runtime_dir({"TMPDIR": "/tmp"}) == Path(f"/tmp/canal-{os.geteuid()}")
    assert runtime_dir({"CANAL_RUNTIME_DIR": "/x/y"}) == Path("/x/y")


def test_identity_picks_the_server_and_other_variables_do_not(tmp_path: Path) -> None:
    base = {"CANAL_RUNTIME_DIR": str(tmp_path / "rt"), "CANAL_STATE_DIR": "/a"}
    one = server_paths(base)
    assert server_paths({**base, "CANAL_ACTOR": "someone", "PATH": "/bin"}) == one
    assert server_paths({**base, "CANAL_STATE_DIR": "/b"}) != one
    assert server_paths({**base, "CANAL_KEY": "k" * 44}).name != one.name
    assert (tmp_path / "rt" / "salt").stat().st_mode & 0o777 == 0o600
