"""The objects of a checkpoint are put on disk before its record names them, without opening them again:
an object carries the mode of the file it stores, which its owner (the store's user) may not be allowed
to open, though the user could read the file itself (through its group or other bits)."""

from __future__ import annotations

import os
import shutil
import tempfile
import traceback
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys

NOBODY = 65534
KEYS = Keys("k", {"k": b"k" * 32})


def _take_as(uid: int, state: Path, ws: Path, err: Path) -> int:
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        store = CheckpointStore(state, ws, CheckpointSettings(), KEYS)
        return 0 if "shared.txt" in store.manifest(store.take(kind="run")) else 2
    except BaseException:
        err.write_text(traceback.format_exc())
        return 1


@pytest.mark.skipif(os.geteuid() != 0, reason="running a store as another uid needs root (CI runs as root)")
def test_a_user_checkpoints_a_file_it_reads_through_its_other_bits() -> None:
    base = Path(tempfile.mkdtemp(prefix="canal-test-flush-"))
    try:
        os.chown(base, NOBODY, NOBODY)
        ws = base / "ws"
        ws.mkdir()
        os.chown(ws, NOBODY, NOBODY)
        shared = ws / "shared.txt"
        shared.write_text("root's, readable by others\n")
        shared.chmod(0o044)  # the store's object gets this mode with the store's user as owner: ---r--r--
        err = base / "err"
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            os._exit(_take_as(NOBODY, base / "state", ws, err))
        _, status = os.waitpid(pid, 0)
        why = err.read_text() if err.exists() else "not in the manifest"
        assert os.waitstatus_to_exitcode(status) == 0, why
    finally:
        shutil.rmtree(base)


def test_a_record_is_durable_before_the_command_and_its_link_never_half_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The take syncs the record and its folder (the command runs only then); linking the audit record
    syncs the new record's data (after a crash the file is the old record or the new one, whole, never
    empty) but not the folder's rename, which the next checkpoint's folder sync makes last."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    store = CheckpointStore(tmp_path / "state", ws, CheckpointSettings(), KEYS)
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        synced.append("folder" if os.path.isdir(path) else Path(path).parent.name)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    cp = store.take(kind="run")
    assert synced[-2:] == ["records", "folder"]
    synced.clear()
    linked = store.attach(cp, "a-1")
    assert synced == ["records"]  # the data, not the rename
    assert store.list()[-1].audit_id == "a-1"
    assert linked.audit_id == "a-1"
