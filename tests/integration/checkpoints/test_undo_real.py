"""Under the standard profile, commands the policy cannot see into (``python3 -c``, ``make clean``, a
script that rewrites files) destroy or change workspace files; ``canal undo`` puts them back byte for
byte, with modes and symlinks, and each command's footer names its checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from project_helpers import chown_tree

from canal.host.audit.record import record_id
from canal.runtime.api import Canal
from canal.runtime.run.result import RunResult
from tests.treesnap import tree

REWRITE = """import os, pathlib, time
for p in sorted(pathlib.Path('gen').glob('*.txt')):
    p.write_text(p.read_text() + str(time.time_ns()) + '\\n')
    os.chmod(p, 0o600)
pathlib.Path('gen/link').unlink(missing_ok=True)
os.symlink('1.txt', 'gen/link')
"""


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "data" / "nested").mkdir(parents=True)
    (project / "data" / "a.txt").write_text("alpha\n")
    (project / "data" / "nested" / "deep.bin").write_bytes(bytes(range(256)) * 40)
    (project / "data" / "run.sh").write_text("#!/bin/sh\necho run\n")
    (project / "data" / "run.sh").chmod(0o755)
    (project / "data" / "private").write_text("mine\n")
    (project / "data" / "private").chmod(0o600)
    (project / "data" / "to-a").symlink_to("a.txt")
    (project / "data-link").symlink_to("data")
    (project / "dangling").symlink_to("nowhere/at/all")
    (project / "build").mkdir()
    (project / "build" / "app").write_bytes(b"\x7fELF fake")
    (project / "main.o").write_bytes(b"\0obj")
    (project / "Makefile").write_text("clean:\n\trm -rf build *.o\n")
    (project / "gen").mkdir()
    (project / "gen" / "1.txt").write_text("one\n")
    (project / "gen" / "2.txt").write_text("two\n")
    (project / "rewrite.py").write_text(REWRITE)
    chown_tree(project)
    return project


def footer_names_checkpoint(result: RunResult) -> str:
    assert result.checkpoint is not None, result.text
    cp = result.checkpoint.id
    assert result.text.splitlines()[-1].endswith(f"| checkpoint {cp}]"), result.text  # the API names ids
    return cp


def canal_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "canal.cli", *args], cwd=project,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=120, check=False)


def test_undo_restores_what_opaque_commands_destroyed(host_env: Path,
                                                      open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    original = tree(project)
    canal = open_canal(project)

    rmtree = canal.run("python3 -c \"import shutil; shutil.rmtree('data')\"")
    assert rmtree.status == "ok", rmtree.text
    first = footer_names_checkpoint(rmtree)
    assert not (project / "data").exists()

    clean = canal.run("make clean")
    assert clean.status == "ok", clean.text
    footer_names_checkpoint(clean)
    assert not (project / "build").exists()
    assert not (project / "main.o").exists()

    for _ in range(2):
        rewritten = canal.run("python3 rewrite.py")
        assert rewritten.status == "ok", rewritten.text
        footer_names_checkpoint(rewritten)
    assert (project / "gen" / "1.txt").read_text().startswith("one\n1")
    damaged = tree(project)

    listing = canal_cli(project, "checkpoints")
    assert listing.returncode == 0, listing.stderr
    assert "shutil.rmtree" in listing.stdout
    assert "make clean" in listing.stdout

    undone = canal_cli(project, "undo", first)
    assert undone.returncode == 0, undone.stderr
    assert tree(project) == original
    before_undo = undone.stdout.rsplit("canal undo ", 1)[1].split()[0]

    redo = canal_cli(project, "undo", before_undo)  # the undo itself can be undone
    assert redo.returncode == 0, redo.stderr
    assert tree(project) == damaged


def test_the_audit_log_links_each_command_to_its_checkpoint(host_env: Path,
                                                            open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    canal = open_canal(project)
    result = canal.run("make clean")
    cp = canal._services.checkpoints.get(footer_names_checkpoint(result))
    records = [json.loads(line.text) for line in canal._services.audit.lines()]
    started = [r for r in records if r["event"] == "run.started"]
    assert started[-1]["data"]["checkpoint"] == cp.id
    assert cp.audit_id == record_id(started[-1]["seq"])
    assert cp.command == "make clean"


def test_read_only_commands_take_no_checkpoint_and_git_status_writes_nothing(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "safe.directory=*"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=project, check=True)
    chown_tree(project)
    os.utime(project / "Makefile", ns=(1, 1))  # a stale index entry: git status would refresh the index
    index = (project / ".git" / "index").read_bytes()
    canal = open_canal(project)
    for command in ("git status", "ls -la data | grep a", "cat Makefile"):
        result = canal.run(command)
        assert result.status == "ok", result.text
        assert result.checkpoint is None, command
    assert (project / ".git" / "index").read_bytes() == index
    assert canal._services.checkpoints.list() == []
    wrote = canal.run("git status > status.txt")
    assert wrote.checkpoint is not None
