"""Records read and checked once are kept while their files stay as they were: a prune reads every
record, and reading them all again cost ~10 ms per prune at a hundred records. A record changed in any
way, even with its size and mtime put back, is read and checked again (its ctime moved)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointStoreCorrupt, records
from tests.unit.checkpoints.conftest import MakeStore


def test_an_unchanged_record_is_not_read_again(make_store: MakeStore, workspace: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store()
    first = store.take(kind="run")
    (workspace / "run.sh").write_text("changed\n")
    taken = store.take(kind="run")
    reads: list[str] = []
    real = records.read_record

    def counting(path: Path, *args: object) -> object:
        reads.append(path.name)
        return real(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(records, "read_record", counting)
    assert [c.id for c in store.list()] == [first.id, taken.id]
    assert reads == [f"{taken.seq:010d}.json"]  # the oldest was read by retention's check already
    assert [c.id for c in store.list()] == [first.id, taken.id]
    assert len(reads) == 1


def test_a_record_changed_with_its_size_and_mtime_put_back_is_checked_again(make_store: MakeStore) -> None:
    store = make_store()
    taken = store.take(kind="run")
    assert store.get(taken.id).pinned is False
    path = store.records_dir / f"{taken.seq:010d}.json"
    st = path.stat()
    data = path.read_bytes()
    forged = data.replace(b'"pinned":false', b'"pinned":true ')  # same length, HMAC no longer matches
    assert forged != data
    assert len(forged) == len(data)
    with path.open("r+b") as fh:  # in place: the same inode
        fh.write(forged)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(CheckpointStoreCorrupt):
        store.get(taken.id)
