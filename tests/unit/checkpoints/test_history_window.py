"""The newest checkpoints only: with the default floor (24 h) a busy project keeps every checkpoint of
the day, thousands, and ``canal checkpoints`` (and the MCP tool an agent calls) read and printed every
one of them. ``history(limit=N)`` reads the newest N records and counts the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import CanalGroup
from canal.cli.work import checkpoint_cmd
from canal.core.errors import CanalError
from canal.host.checkpoints import CheckpointStore
from canal.runtime.services import Services
from tests.unit.checkpoints.conftest import MakeStore


def _steps(store: CheckpointStore, workspace: Path, count: int) -> list[str]:
    ids = []
    for i in range(count):
        (workspace / "src" / "main.py").write_text(f"v{i}\n")
        if i % 3 == 0:
            (workspace / f"new{i}.txt").write_text("x")
        ids.append(store.take(kind="run", command=f"step {i}").id)
    return ids


def test_the_newest_rows_are_those_of_the_whole_history(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    ids = _steps(store, workspace, 10)
    whole = store.history()
    window = store.history(limit=3)
    assert [r.checkpoint.id for r in window.rows] == ids[-3:]  # oldest first, as the whole list
    assert window.rows == whole.rows[-3:]  # what changed after each, the newest's against now included
    assert window.older == 7
    assert whole.older == 0
    assert store.history(limit=50).rows == whole.rows
    assert store.history(limit=50).older == 0


def test_only_the_newest_records_are_read(workspace: Path, make_store: MakeStore,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store()
    _steps(store, workspace, 12)
    read: list[str] = []
    real = store.verified.read
    monkeypatch.setattr(store.verified, "read", lambda path: read.append(path.name) or real(path))
    store.history(limit=4)
    assert sorted(read) == [f"{seq:010d}.json" for seq in range(9, 13)]


def test_a_corrupt_record_in_the_window_is_named_and_one_older_is_counted(
        workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    ids = _steps(store, workspace, 8)
    for seq in (2, 7):  # cp-2 is older than the window, cp-7 inside it
        path = store.records_dir / f"{seq:010d}.json"
        path.write_text(path.read_text().replace(f"step {seq - 1}", "ls"))
    window = store.history(limit=3)
    assert [r.checkpoint.id for r in window.rows] == [ids[4], ids[5], ids[7]]  # three that verify
    assert [c.id for c in window.corrupt] == [ids[6]]
    assert window.older == 4  # cp-1 to cp-4, the corrupt cp-2 among them: not read
    # across the corrupt record, what changed after cp-6 is still told (two manifests compared)
    assert window.rows[1].changed_after == store.history().rows[4].changed_after


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused(workspace: Path, make_store: MakeStore, limit: int) -> None:
    store = make_store()
    store.take(kind="run")
    with pytest.raises(CanalError, match="at least 1"):
        store.history(limit=limit)


@pytest.fixture
def project(canal_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = canal_home / "project"
    project.mkdir()
    (project / "a.txt").write_text("a\n")
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(project))
    return project


def _cli(*args: str) -> tuple[int, str, str]:
    group = CanalGroup("canal")
    checkpoint_cmd.register(group)
    done = CliRunner().invoke(group, ["checkpoints", *args])
    return done.exit_code, done.stdout, done.stderr


def test_the_cli_shows_the_newest_twenty_and_says_how_to_see_the_rest(project: Path) -> None:
    store = Services(project).checkpoints
    ids = [store.take(kind="run", command=f"step {i}").id for i in range(25)]
    code, out, _ = _cli()
    assert code == 0, out
    shown = [line.split()[0] for line in out.splitlines() if line.startswith("cp-")]
    assert shown == ids[-20:]
    assert "5 older checkpoints not shown: canal checkpoints --all" in out
    code, out, _ = _cli("--limit", "2")
    assert [line.split()[0] for line in out.splitlines() if line.startswith("cp-")] == ids[-2:]
    assert "23 older checkpoints not shown" in out
    code, out, _ = _cli("--all")
    assert [line.split()[0] for line in out.splitlines() if line.startswith("cp-")] == ids
    assert "not shown" not in out
    code, out, _ = _cli("--json", "--limit", "3")
    data = json.loads(out)
    assert [r["checkpoint"]["id"] for r in data["checkpoints"]] == ids[-3:]
    assert data["older"] == 22


def test_the_cli_refuses_a_limit_below_one_and_a_limit_with_all(project: Path) -> None:
    Services(project).checkpoints.take(kind="run")
    code, _, err = _cli("--limit", "0")
    assert code == 2
    assert "--limit" in err
    code, _, err = _cli("--limit", "3", "--all")
    assert code == 2
    assert "--all" in err
