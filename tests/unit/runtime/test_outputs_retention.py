"""Saved full outputs are kept for a day, then ``canal gc`` deletes them."""

from __future__ import annotations

import os
import time
from pathlib import Path

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
