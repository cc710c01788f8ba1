"""Issue 36, finding 1: checkpoints restored the setuid bit. A restore, a copy fork and a fork's apply
write files as Canal's own user (root, often), so none of them may put S_ISUID or S_ISGID back: the
bits are dropped and the result names each path."""

from __future__ import annotations

import stat
from pathlib import Path

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.forks import ForkStore
from tests.unit.checkpoints.conftest import MakeStore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_undo_restores_a_setuid_file_without_its_bits(workspace: Path, make_store: MakeStore) -> None:
    (workspace / "tool").write_bytes(b"\x7fELF")
    (workspace / "tool").chmod(0o4755)
    (workspace / "shared").mkdir()
    (workspace / "shared").chmod(0o2775)
    (workspace / "shared" / "x").write_text("x\n")
    store = make_store()
    cp = store.take(kind="run", command="rm -r tool shared")
    (workspace / "tool").unlink()
    (workspace / "shared" / "x").unlink()
    (workspace / "shared").rmdir()
    result = store.undo(cp.id)
    assert (workspace / "tool").read_bytes() == b"\x7fELF"
    assert _mode(workspace / "tool") == 0o755
    assert _mode(workspace / "shared") == 0o775
    assert result.stripped == ["shared", "tool"]


def test_an_ordinary_undo_strips_nothing(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    cp = store.take(kind="run", command="rm run.sh")
    (workspace / "run.sh").unlink()
    result = store.undo(cp.id)
    assert _mode(workspace / "run.sh") == 0o755
    assert result.stripped == []


def test_a_copy_fork_and_its_apply_write_no_setuid_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tool").write_text("#!/bin/sh\n")
    (ws / "tool").chmod(0o6755)
    checkpoints = CheckpointStore(tmp_path / "state" / "checkpoints", ws, CheckpointSettings(),
                                  Keys("k", {"k": b"k" * 32}))
    forks = ForkStore(tmp_path / "state" / "forks", checkpoints)
    forks.create("f", mode="copy")
    copy = forks.workspace("f")
    assert _mode(copy / "tool") == 0o755
    (copy / "new").write_text("n\n")
    (copy / "new").chmod(0o4700)  # as if something made it there: apply must not carry the bit over
    result = forks.apply("f")
    assert _mode(ws / "new") == 0o700
    assert result.stripped == ["new"]
