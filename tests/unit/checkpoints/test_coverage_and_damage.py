from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from canal.host.checkpoints import (
    CHECKPOINT_FAILED,
    WORKSPACE_TOO_BIG,
    CheckpointStoreCorrupt,
)
from tests.error_codes import raises_code
from tests.unit.checkpoints.conftest import MakeStore, tree


def test_gitignored_paths_are_named_not_covered(workspace: Path, make_store: MakeStore) -> None:
    (workspace / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_bytes(b"obj")
    (workspace / "x.log").write_text("log")
    (workspace / "keep.log").write_text("kept")
    cp = make_store().take(kind="run")
    skipped = {n.path: n.reason for n in cp.not_covered}
    assert skipped == {"build/": ".gitignore", "x.log": ".gitignore"}
    assert cp.not_covered_total == 2


def test_a_gitignore_line_git_rejects_is_skipped_as_git_skips_it(workspace: Path,
                                                                   make_store: MakeStore) -> None:
    """A pattern ending in a lone backslash, or with a range backwards, is invalid: git never matches
    it and keeps the others. A command writing one must not make every later checkpoint (and so every
    command) fail."""
    (workspace / ".gitignore").write_bytes(b"*.log\nfoo\\\n[z-a]\n")
    (workspace / "x.log").write_text("log")
    (workspace / "foo").write_text("not ignored")
    (workspace / "z").write_text("not ignored")
    cp = make_store().take(kind="run")
    assert {n.path: n.reason for n in cp.not_covered} == {"x.log": ".gitignore"}
    assert {"foo", "z"} <= set(make_store().manifest(cp))


def test_a_covered_file_stays_covered_when_gitignore_later_names_it(workspace: Path,
                                                                    make_store: MakeStore) -> None:
    store = make_store()
    store.take(kind="run")
    (workspace / ".gitignore").write_text("*\n")  # a command tries to hide everything
    cp = store.take(kind="run")
    assert "src/main.py" not in {n.path for n in cp.not_covered}
    (workspace / "src" / "main.py").unlink()
    store.undo(cp.id)
    assert (workspace / "src" / "main.py").read_text() == "print('hi')\n"


def test_configured_exclude_and_size_cap_are_named(workspace: Path, make_store: MakeStore) -> None:
    (workspace / "huge.bin").write_bytes(b"h" * 2048)
    cp = make_store(exclude=["data/"], max_file_bytes=1024).take(kind="run")
    skipped = {n.path: n.reason for n in cp.not_covered}
    assert skipped["data/"] == "excluded by canal.yaml"
    assert skipped["huge.bin"].startswith("over the size cap")


def test_workspace_over_the_cap_is_refused(workspace: Path, make_store: MakeStore) -> None:
    with raises_code(WORKSPACE_TOO_BIG, match="max_files"):
        make_store(max_files=3).take(kind="run")
    with raises_code(WORKSPACE_TOO_BIG, match="max_workspace_bytes"):
        make_store(max_workspace_bytes=100).take(kind="run")


def test_a_tampered_object_is_named_and_nothing_is_restored(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    cp = store.take(kind="run")
    (workspace / "src" / "main.py").write_text("edited\n")
    (workspace / "run.sh").unlink()
    now = tree(workspace)
    obj = next(store.objects.path(n) for n, size in store.objects.names() if size == len("print('hi')\n"))
    obj.chmod(0o644)
    obj.write_text("print('pwned')\n")
    with pytest.raises(CheckpointStoreCorrupt, match="tampered") as err:
        store.undo(cp.id)
    assert err.value.details["object"] == obj.name
    assert tree(workspace) == now


def test_a_tampered_record_is_named(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    cp = store.take(kind="run", command="make clean")
    path = store.records_dir / f"{cp.seq:010d}.json"
    path.write_text(path.read_text().replace("make clean", "ls"))
    with pytest.raises(CheckpointStoreCorrupt, match=f"record {cp.id}"):
        store.undo(cp.id)


def test_a_tampered_manifest_is_named(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    cp = store.take(kind="run")
    (store.manifests_dir / f"{cp.manifest}.z").write_bytes(b"garbage")
    with pytest.raises(CheckpointStoreCorrupt, match="manifest"):
        store.diff(cp.id)


def test_a_manifest_tampered_after_it_was_read_is_named(workspace: Path, make_store: MakeStore) -> None:
    """The store keeps the entries it read last and those of the last state: neither hides a file
    changed since (a delta's parent included)."""
    store = make_store()
    first = store.take(kind="run")
    (workspace / "run.sh").write_text("changed\n")
    second = store.take(kind="run")
    assert store.manifest(first) != store.manifest(second)  # both held in memory now
    for cp in (first, second):
        (store.manifests_dir / f"{first.manifest}.z").write_bytes(b"garbage")  # the base of both
        with pytest.raises(CheckpointStoreCorrupt, match="manifest"):
            store.manifest(cp)


def test_a_tampered_stat_cache_is_rebuilt_and_said(workspace: Path, make_store: MakeStore) -> None:
    make_store().take(kind="run")
    index = make_store().index_path
    index.write_bytes(index.read_bytes().replace(b"src/main.py", b"src/evil.py"))
    cp = make_store().take(kind="run")
    assert "stat cache failed its check" in cp.note


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root (CI runs as root)")
def test_disk_full_refuses_and_leaves_no_record(tmp_path: Path, workspace: Path,
                                                make_store: MakeStore) -> None:
    state = tmp_path / "state"
    state.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(state)], check=True)
    try:
        (workspace / "data" / "big.bin").write_bytes(os.urandom(256 * 1024))
        store = make_store()
        with raises_code(CHECKPOINT_FAILED, match="disk is full") as err:
            store.take(kind="run")
        assert "not run unprotected" in err.value.message
        assert store.list() == []
    finally:
        subprocess.run(["umount", str(state)], check=True)


def test_diff_is_a_patch_git_apply_accepts(tmp_path: Path, workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    cp = store.take(kind="run")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(workspace), str(copy)], check=True)
    (workspace / "src" / "main.py").write_text("print('hi')\nprint('more')\n")
    (workspace / "notes.md").write_text("new file\nno newline")
    (workspace / "secret.txt").unlink()
    (workspace / "run.sh").chmod(0o644)
    (workspace / "data" / "blob.bin").write_bytes(b"\0\1\2")
    result = store.diff(cp.id)
    kinds = {c.path: (c.kind, c.binary) for c in result.changes}
    assert kinds == {"src/main.py": ("modified", False), "notes.md": ("added", False),
                     "secret.txt": ("deleted", False), "run.sh": ("mode", False),
                     "data/blob.bin": ("modified", True)}
    (tmp_path / "p.diff").write_text(result.patch)
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=copy, check=True)
    for rel in ("src/main.py", "notes.md"):
        assert (copy / rel).read_bytes() == (workspace / rel).read_bytes()
    assert not (copy / "secret.txt").exists()
    assert (copy / "run.sh").stat().st_mode & 0o777 == 0o644


def test_a_record_written_before_a_field_was_added_still_verifies(workspace: Path,
                                                                  make_store: MakeStore) -> None:
    """The HMAC covers the fields as stored: a model that grew a defaulted field keeps old files valid."""
    import json

    from canal.host.checkpoints.records import sign_json

    store = make_store()
    cp = store.take(kind="run", command="make")
    path = store.records_dir / f"{cp.seq:010d}.json"
    older = json.loads(path.read_bytes())
    del older["note"]  # as a version without the field wrote it
    path.write_bytes(sign_json(older, store.keys))
    assert store.get(cp.id).command == "make"
    path.write_text(path.read_text().replace('"make"', '"ls"'))
    with pytest.raises(CheckpointStoreCorrupt, match="HMAC"):
        store.get(cp.id)


def test_a_corrupt_record_is_named_and_the_others_still_listed(workspace: Path,
                                                               make_store: MakeStore) -> None:
    store = make_store()
    first = store.take(kind="run", command="make")
    (workspace / "src" / "main.py").write_text("v2\n")
    middle = store.take(kind="run", command="make clean")
    (workspace / "run.sh").unlink()
    last = store.take(kind="run", command="make test")
    (store.records_dir / f"{last.seq + 1:010d}.json").write_text("{not json")  # unreadable
    path = store.records_dir / f"{middle.seq:010d}.json"
    path.write_text(path.read_text().replace("make clean", "ls"))  # fails its HMAC
    history = store.history()
    assert [r.checkpoint.id for r in history.rows] == [first.id, last.id]
    assert {(c.id, c.why) for c in history.corrupt} == {
        (middle.id, "its HMAC does not match"), (f"cp-{last.seq + 1}", "unreadable (JSONDecodeError)")}
    # what changed after `first` is still told, across the corrupt record (main.py, then run.sh)
    assert history.rows[0].changed_after.modified == 1
    assert history.rows[0].changed_after.deleted == 1
    with pytest.raises(CheckpointStoreCorrupt, match=f"record {middle.id}"):
        store.undo(middle.id)  # never restored from
