"""A file over the checkpoint's size cap has no copy in the checkpoint: a command that would truncate it
(`: > big.bin`, allowed under standard because undo was thought to cover it) is confirmed first, and
an undo after a confirmed truncation never deletes the file it has no copy of."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from project_helpers import chown_tree

from canal.runtime.api import Canal

MIB = 1024 * 1024


def make_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "notes.txt").write_text("notes\n")
    with (project / "big.bin").open("wb") as fh:
        for _ in range(100):
            fh.write(os.urandom(MIB))
    chown_tree(project)
    return project


def test_truncating_a_100_mib_file_is_confirmed_and_undo_keeps_it(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    canal = open_canal(project)
    asked = canal.run(": > big.bin")
    assert asked.status == "confirmation_required", asked.text
    assert asked.confirmation is not None
    assert "big.bin" in asked.confirmation.reason
    assert (project / "big.bin").stat().st_size == 100 * MIB  # nothing ran

    small = canal.run("echo more >> notes.txt")  # a write that cannot reach big.bin is not asked
    assert small.status == "ok", small.text

    done = canal.run(": > big.bin", confirm=asked.confirmation.token)
    assert done.status == "ok", done.text
    assert (project / "big.bin").stat().st_size == 0
    undone = canal.undo()
    assert (project / "big.bin").exists(), "undo deleted a file it had no copy of"
    assert "big.bin" in [n.path for n in undone.left_alone]
