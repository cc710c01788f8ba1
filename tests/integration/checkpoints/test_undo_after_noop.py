"""`canal undo` with no checkpoint named undoes the newest command that changed something: after an
edit and a test run that changed nothing, it reverts the edit (not the no-op) and names it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from project_helpers import chown_tree

from canal.runtime.api import Canal


def test_plain_undo_after_an_edit_and_a_no_op_test_run_reverts_the_edit(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    project = host_env / "project"
    project.mkdir()
    (project / "app.py").write_text("answer = 41\n")
    chown_tree(project)
    canal = open_canal(project)
    edited = canal.files.checkpoint("canal edit app.py")  # as the CLI and MCP front ends do
    canal.files.edit("app.py", old="41", new="42", base=project)
    assert (project / "app.py").read_text() == "answer = 42\n"
    tests = canal.run("python3 -c 'import sys; sys.exit(0)'")  # a test run that changes nothing
    assert tests.status == "ok", tests.text
    assert tests.checkpoint is not None
    undone = canal.undo()
    assert undone.command == "canal edit app.py"
    assert (project / "app.py").read_text() == "answer = 41\n", undone
    assert [c.path for c in undone.changes] == ["app.py"]
    assert undone.restored_to == edited
