"""Saved full outputs are kept for a day, then ``canal gc`` deletes them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from canal.host.storage.usage import Evicted, enforce_outputs_total
from canal.runtime.api import purge_outputs


def test_only_old_outputs_are_purged(tmp_path: Path) -> None:
    box = tmp_path / "default"
    box.mkdir()
    old, fresh = box / "old.txt", box / "fresh.txt"
    old.write_text("x")
    fresh.write_text("y")
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    assert purge_outputs(tmp_path, 86400) == 1
    assert not old.exists()
    assert fresh.exists()
    assert purge_outputs(tmp_path / "missing", 86400) == 0


def test_the_total_cap_deletes_the_oldest_outputs_of_every_sandbox_but_the_kept(tmp_path: Path) -> None:
    files = []
    for i, (box, name) in enumerate([("a", "1"), ("b", "2"), ("a", "3"), ("b", "4")]):
        (tmp_path / box).mkdir(exist_ok=True)
        path = tmp_path / box / name
        path.write_bytes(b"x" * 8192)
        os.utime(path, (1000 + i, 1000 + i))
        files.append(path)
    os.link(files[3], tmp_path / "a" / "4-link")  # one file under two names counts once
    (tmp_path / "loose.txt").write_bytes(b"x" * 8192)  # not in a sandbox's folder: not counted
    used = sum(os.stat(p).st_blocks * 512 for p in files)
    assert enforce_outputs_total(tmp_path, used, [files[0]]) == Evicted(0, 0)
    gone = enforce_outputs_total(tmp_path, used - 1, [files[0]])  # the oldest is kept: the next goes
    assert gone.files == 1
    assert [p.exists() for p in files] == [True, False, True, True]
    assert enforce_outputs_total(tmp_path / "missing", 0) == Evicted(0, 0)
