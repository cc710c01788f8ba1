"""A take does not list the records folder while what it knows of it still holds (the newest record is
there and no newer one): a day's checkpoints inside the floor made every take O(records). A record
another process added, or a prune, makes it list again, so sequence numbers never repeat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from tests.unit.checkpoints.conftest import MakeStore

KEYS = Keys("k1", {"k1": b"k" * 32})


def test_takes_list_the_records_folder_once(make_store: MakeStore, workspace: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store()
    store.take(kind="run")
    listed: list[str] = []
    real = os.listdir

    def counting(path: object = ".") -> list[str]:
        if str(path).endswith("records"):
            listed.append(str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", counting)
    for i in range(5):
        (workspace / "run.sh").write_text(f"change {i}\n")
        store.take(kind="run")
    assert listed == []
    assert [c.seq for c in store.list()] == [1, 2, 3, 4, 5, 6]


def test_a_record_another_process_took_is_never_overwritten(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "state" / "checkpoints"
    one = CheckpointStore(root, workspace, CheckpointSettings(), KEYS)
    other = CheckpointStore(root, workspace, CheckpointSettings(), KEYS)
    first = one.take(kind="run", command="one")
    by_other = [other.take(kind="run", command=f"other {i}") for i in range(2)]
    after = one.take(kind="run", command="one again")
    assert [c.seq for c in (first, *by_other, after)] == [1, 2, 3, 4]
    assert [c.command for c in one.list()] == ["one", "other 0", "other 1", "one again"]


def test_a_prune_elsewhere_is_seen(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "state" / "checkpoints"
    settings = CheckpointSettings(keep=2, floor_count=1, floor_hours=0)
    one = CheckpointStore(root, workspace, settings, KEYS)
    other = CheckpointStore(root, workspace, settings, KEYS)
    for i in range(3):
        (workspace / "run.sh").write_text(f"one {i}\n")
        one.take(kind="run", command=f"one {i}")
    other.prune()
    (workspace / "run.sh").write_text("again\n")
    again = one.take(kind="run", command="again")
    assert again.seq == 4
    assert [c.seq for c in one.list()][-1] == 4
