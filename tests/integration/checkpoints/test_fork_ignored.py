"""A fork carries the whole working tree, gitignored folders included: a subagent's first act is running
the project's tests from its `.venv`. What the fork changes there never reaches the project, and
`changes` still leaves ignored paths out."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.runtime.api import Canal
from tests.treesnap import tree

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('app')\n")
    (project / ".gitignore").write_text(".venv/\nbuild/\n")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "tool").write_text("#!/bin/sh\necho tool ran in \"$PWD\"\n")
    (project / ".venv" / "bin" / "tool").chmod(0o755)
    (project / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (project / ".venv" / "lib").mkdir()
    (project / ".venv" / "lib" / "mod.py").write_text("X = 1\n")
    (project / "build").mkdir()
    (project / "build" / "out.o").write_bytes(b"\0obj")
    chown_tree(project)
    return project


def test_a_fork_runs_a_tool_from_the_gitignored_venv(host_env: Path,
                                                     open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    before = tree(project)
    canal = open_canal(project)
    canal.fork("f")
    ran = canal.run(".venv/bin/tool", sandbox="f")
    assert ran.exit_code == 0, ran.text
    assert "tool ran in /workspace" in ran.output
    py = canal.run(".venv/bin/python -c 'import sys; sys.path.insert(0, \".venv/lib\"); import mod; "
                   "print(mod.X)'", sandbox="f")
    assert py.exit_code == 0, py.text
    assert py.output.strip() == "1"
    wrote = canal.run("echo changed > .venv/lib/mod.py && echo y > build/out.o && echo z >> src/app.py",
                      sandbox="f")
    assert wrote.exit_code == 0, wrote.text
    assert tree(project) == before  # the project's ignored files are not written through the fork
    changed = canal.changes("f")
    assert [c.path for c in changed.changes] == ["src/app.py"]
