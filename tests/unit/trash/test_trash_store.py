from __future__ import annotations

import errno
import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from canal.host.files.errors import PathNotFound, PathOutsideWorkspace
from canal.host.trash import Trash, remove_paths
from canal.host.trash.errors import (
    FOLDER_NEEDS_RECURSIVE,
    TRASH_ENTRY_NOT_FOUND,
    CannotTrashWorkspace,
    RestoreTargetExists,
)
from tests.error_codes import raises_code


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_delete_then_restore_returns_same_bytes_and_mode(workspace: Path, trash: Trash) -> None:
    f = workspace / "notes.txt"
    f.write_bytes(b"line one\n\x00\xffbinary tail")
    f.chmod(0o751)
    entry = trash.put(f, workspace=workspace, move=True, actor="agent")
    assert not f.exists()
    assert entry.kind == "file"
    assert entry.size == 22
    assert entry.mode == 0o751
    trash.restore(entry.id)
    assert f.read_bytes() == b"line one\n\x00\xffbinary tail"
    assert _mode(f) == 0o751
    assert trash.list() == []


def test_info_record_is_private_and_complete(workspace: Path, trash: Trash, audit: Any) -> None:
    (workspace / "a.txt").write_text("hello")
    entry = trash.put(workspace / "a.txt", workspace=workspace, move=True, actor="tester")
    info = trash.info_dir / f"{entry.id}.json"
    assert _mode(info) == 0o600
    record = json.loads(info.read_text())
    assert record["original_path"] == str((workspace / "a.txt").resolve())
    assert record["sha256"] == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    assert record["actor"] == "tester"
    assert record["audit_id"] == "a-000001"
    assert record["deleted_at"].endswith("Z") or record["deleted_at"].endswith("+00:00")
    assert audit.events[0][0] == "trash.put"
    assert audit.events[0][2] == "tester"


def test_folder_restored_whole_with_modes(workspace: Path, trash: Trash) -> None:
    root = workspace / "build"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "x.bin").write_bytes(b"\x01\x02")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "sub").chmod(0o750)
    (root / "link").symlink_to("run.sh")
    before = _tree(root)
    entry = trash.put(root, workspace=workspace, move=True, actor="agent")
    assert entry.kind == "dir"
    assert entry.size == 2 + len("#!/bin/sh\n")
    trash.restore(entry.id)
    assert _tree(root) == before


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    out: dict[str, tuple[int, bytes]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        content = os.readlink(path).encode() if path.is_symlink() else (
            path.read_bytes() if path.is_file() else b"")
        out[rel] = (path.lstat().st_mode, content)
    return out


def test_symlink_to_host_file_is_removed_without_touching_target(tmp_path: Path, workspace: Path,
                                                                 trash: Trash) -> None:
    host = tmp_path / "host-secret.txt"
    host.write_text("host data")
    host.chmod(0o640)
    (workspace / "escape").symlink_to(host)
    [outcome] = remove_paths(trash, workspace, [workspace / "escape"])
    assert outcome.status == "trashed"
    assert outcome.entry is not None
    assert outcome.entry.kind == "symlink"
    assert not os.path.lexists(workspace / "escape")
    assert host.read_text() == "host data"
    assert _mode(host) == 0o640
    assert os.readlink(trash.files_dir / outcome.entry.id) == str(host)
    trash.restore(outcome.entry.id)
    assert os.readlink(workspace / "escape") == str(host)


def test_restore_refuses_to_overwrite(workspace: Path, trash: Trash) -> None:
    f = workspace / "a.txt"
    f.write_text("old")
    entry = trash.put(f, workspace=workspace, move=True, actor="agent")
    f.write_text("new")
    with pytest.raises(RestoreTargetExists) as err:
        trash.restore(entry.id)
    assert err.value.code == "RESTORE_TARGET_EXISTS"
    assert [a.args.get("force") for a in err.value.next] == [None, True]
    assert f.read_text() == "new"
    assert [e.id for e in trash.list()] == [entry.id]


def test_restore_force_trashes_the_current_file_first(workspace: Path, trash: Trash) -> None:
    f = workspace / "a.txt"
    f.write_text("old")
    entry = trash.put(f, workspace=workspace, move=True, actor="agent")
    f.write_text("new")
    result = trash.restore(entry.id, force=True)
    assert f.read_text() == "old"
    assert result.displaced_id is not None
    trash.restore(result.displaced_id, to=workspace / "a.new.txt")
    assert (workspace / "a.new.txt").read_text() == "new"


def test_restore_to_another_path_creates_folders(workspace: Path, trash: Trash) -> None:
    (workspace / "a.txt").write_text("x")
    entry = trash.put(workspace / "a.txt", workspace=workspace, move=True, actor="agent")
    trash.restore(entry.id, to=workspace / "deep" / "er" / "b.txt")
    assert (workspace / "deep" / "er" / "b.txt").read_text() == "x"


def test_restore_to_outside_workspace_is_refused(tmp_path: Path, workspace: Path, trash: Trash) -> None:
    (workspace / "a.txt").write_text("x")
    entry = trash.put(workspace / "a.txt", workspace=workspace, move=True, actor="agent")
    with pytest.raises(PathOutsideWorkspace):
        trash.restore(entry.id, to=tmp_path / "elsewhere.txt")
    assert not (tmp_path / "elsewhere.txt").exists()


def test_purge_removes_only_old_entries(workspace: Path, tmp_path: Path, audit: Any) -> None:
    now = [datetime(2025, 1, 1, tzinfo=UTC)]
    trash = Trash(tmp_path / "trash", audit, clock=lambda: now[0])
    (workspace / "old.txt").write_text("old")
    (workspace / "new.txt").write_text("new")
    old = trash.put(workspace / "old.txt", workspace=workspace, move=True, actor="agent")
    now[0] += timedelta(days=20)
    new = trash.put(workspace / "new.txt", workspace=workspace, move=True, actor="agent")
    now[0] += timedelta(days=15)
    purged = trash.purge(timedelta(days=30))
    assert [e.id for e in purged] == [old.id]
    assert [e.id for e in trash.list()] == [new.id]
    assert not os.path.lexists(trash.files_dir / old.id)
    assert os.path.lexists(trash.files_dir / new.id)
    assert audit.events[-1][0] == "trash.purge"
    assert audit.events[-1][1]["ids"] == [old.id]


def test_copy_keeps_the_original(workspace: Path, trash: Trash) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "f").write_text("keep")
    entry = trash.put(workspace / "d", workspace=workspace, move=False, actor="pipeline")
    assert entry.operation == "copy"
    assert (workspace / "d" / "f").read_text() == "keep"
    (workspace / "d" / "f").write_text("changed")
    trash.restore(entry.id, to=workspace / "d.backup")
    assert (workspace / "d.backup" / "f").read_text() == "keep"


def test_move_across_filesystems_copies_then_unlinks(workspace: Path, trash: Trash,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def exdev(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "rename", exdev)
    monkeypatch.setattr(os, "link", exdev)
    tree = workspace / "t"
    (tree / "s").mkdir(parents=True)
    (tree / "s" / "f").write_bytes(b"abc")
    (tree / "s" / "f").chmod(0o604)
    (tree / "l").symlink_to("/etc/passwd")
    entry = trash.put(tree, workspace=workspace, move=True, actor="agent")
    assert not tree.exists()
    trash.restore(entry.id)
    assert (tree / "s" / "f").read_bytes() == b"abc"
    assert _mode(tree / "s" / "f") == 0o604
    assert os.readlink(tree / "l") == "/etc/passwd"
    assert not os.path.lexists(trash.files_dir / entry.id)


def test_removing_a_path_already_gone_is_a_noop(workspace: Path, trash: Trash) -> None:
    [outcome] = remove_paths(trash, workspace, [workspace / "ghost"])
    assert outcome.status == "already_gone"
    with pytest.raises(PathNotFound):
        trash.put(workspace / "ghost", workspace=workspace, move=True, actor="agent")


def test_rm_folder_needs_recursive_and_moves_nothing(workspace: Path, trash: Trash) -> None:
    (workspace / "f.txt").write_text("x")
    (workspace / "d").mkdir()
    with raises_code(FOLDER_NEEDS_RECURSIVE):
        remove_paths(trash, workspace, [workspace / "f.txt", workspace / "d"])
    assert (workspace / "f.txt").exists()
    outcomes = remove_paths(trash, workspace, [workspace / "f.txt", workspace / "d"], recursive=True)
    assert [o.status for o in outcomes] == ["trashed", "trashed"]


def test_workspace_itself_and_outside_paths_are_refused(tmp_path: Path, workspace: Path,
                                                        trash: Trash) -> None:
    with pytest.raises(CannotTrashWorkspace):
        trash.put(workspace, workspace=workspace, move=True, actor="agent")
    (tmp_path / "outside").write_text("x")
    with pytest.raises(PathOutsideWorkspace):
        remove_paths(trash, workspace, [Path("../outside")], base=workspace)
    assert (tmp_path / "outside").exists()


@pytest.mark.parametrize("bad", ["../../etc/passwd", "t20250101T000000Z-zzzzzz", "", "info"])
def test_unknown_or_malformed_ids_are_not_found(trash: Trash, bad: str) -> None:
    with raises_code(TRASH_ENTRY_NOT_FOUND):
        trash.restore(bad)


class FailingAudit:
    def append(self, event: str, data: object, *, actor: str = "agent") -> str:
        raise RuntimeError("audit log unavailable")


def test_item_stays_restorable_when_the_audit_append_fails(workspace: Path, tmp_path: Path) -> None:
    trash = Trash(tmp_path / "trash", FailingAudit())
    (workspace / "a.txt").write_text("precious")
    with pytest.raises(RuntimeError):
        trash.put(workspace / "a.txt", workspace=workspace, move=True, actor="agent")
    [entry] = Trash(tmp_path / "trash").list()
    assert entry.audit_id is None
    Trash(tmp_path / "trash").restore(entry.id)
    assert (workspace / "a.txt").read_text() == "precious"


def test_purge_leaves_a_fresh_reservation_alone(workspace: Path, trash: Trash) -> None:
    (workspace / "a.txt").write_text("x")
    trash.put(workspace / "a.txt", workspace=workspace, move=True, actor="agent")
    in_progress = trash.info_dir / "t20250101T000000Z-abcdef.json"
    in_progress.write_bytes(b"")
    old = trash.info_dir / "t20240101T000000Z-abcdef.json"
    old.write_bytes(b"")
    os.utime(old, (1_700_000_000, 1_700_000_000))
    assert len(trash.purge(timedelta(0))) == 1
    assert in_progress.exists()
    assert not old.exists()
