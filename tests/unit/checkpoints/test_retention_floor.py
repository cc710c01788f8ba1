"""Retention the agent cannot drive: the floor (the last ``floor_hours`` and the last ``floor_count``
checkpoints) is never pruned by the agent's own commands, a checkpoint before a destructive or opaque
command is pinned past it, and a store that would go past its cap refuses instead of forgetting."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import CanalGroup
from canal.cli.work import checkpoint_cmd
from canal.host.checkpoints import CHECKPOINT_NOT_FOUND
from canal.host.checkpoints.errors import CHECKPOINT_PRUNED, CHECKPOINT_STORE_FULL, NOTHING_TO_UNDO
from canal.runtime.services import Services
from tests.error_codes import raises_code
from tests.unit.checkpoints.conftest import MakeStore


def _destroy(workspace: Path, store_take: object) -> str:
    (workspace / "precious.txt").write_text("irreplaceable\n")
    cp = store_take(kind="run", command="python3 -c \"import os; os.remove('precious.txt')\"",  # type: ignore[operator]
                    pinned=True)
    (workspace / "precious.txt").unlink()
    return str(cp.id)


def test_a_hundred_and_twenty_cheap_writes_do_not_flush_the_undo(workspace: Path,
                                                                 make_store: MakeStore) -> None:
    store = make_store()
    cp = _destroy(workspace, store.take)
    for i in range(120):
        (workspace / "t").write_text(f"{i}\n")
        store.take(kind="run", command=f"echo {i} > t")
    assert cp in [c.id for c in store.list()]
    store.undo(cp)
    assert (workspace / "precious.txt").read_text() == "irreplaceable\n"


def test_outside_the_floor_the_count_still_prunes(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(keep=2, floor_hours=0, floor_count=1)
    for i in range(4):
        (workspace / "counter").write_text(str(i))
        store.take(kind="run")
    assert [c.id for c in store.list()] == ["cp-3", "cp-4"]


def test_a_pinned_checkpoint_outlives_the_count(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(keep=2, floor_hours=0, floor_count=1)
    cp = _destroy(workspace, store.take)
    for i in range(5):
        (workspace / "counter").write_text(str(i))
        store.take(kind="run")
    assert cp in [c.id for c in store.list()]


def test_a_store_past_its_cap_refuses_instead_of_forgetting(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(max_store_bytes=20_000)
    cp = _destroy(workspace, store.take)
    for _ in range(2):
        (workspace / "noise.bin").write_bytes(os.urandom(8000))
        store.take(kind="run", command="python3 make_noise.py")
    (workspace / "noise.bin").write_bytes(os.urandom(8000))
    with raises_code(CHECKPOINT_STORE_FULL) as caught:
        store.take(kind="run", command="python3 make_noise.py")
    assert caught.value.code == "CHECKPOINT_STORE_FULL"
    assert any(a.args.get("before") for a in caught.value.next)
    assert cp in [c.id for c in store.list()]
    store.undo(cp)
    assert (workspace / "precious.txt").read_text() == "irreplaceable\n"


def test_undo_of_a_pruned_checkpoint_has_its_own_code(workspace: Path, make_store: MakeStore) -> None:
    store = make_store(keep=2, floor_hours=0, floor_count=1)
    for i in range(4):
        (workspace / "counter").write_text(str(i))
        store.take(kind="run")
    with raises_code(CHECKPOINT_PRUNED) as caught:
        store.undo("cp-1")
    assert caught.value.code == "CHECKPOINT_PRUNED"
    assert caught.value.next
    with raises_code(CHECKPOINT_NOT_FOUND) as unknown:
        store.undo("cp-99")
    assert unknown.value.code == "CHECKPOINT_NOT_FOUND"


def test_plain_undo_skips_checkpoints_after_which_nothing_changed(workspace: Path,
                                                                  make_store: MakeStore) -> None:
    store = make_store()
    store.take(kind="file", command="edit src/main.py")
    (workspace / "src" / "main.py").write_text("print('edited')\n")
    store.take(kind="run", command="python3 -m pytest")  # changed nothing
    result = store.undo()
    assert result.restored_to == "cp-1"
    assert result.command == "edit src/main.py"
    assert (workspace / "src" / "main.py").read_text() == "print('hi')\n"
    assert store.undo(last_command=True).restored_to == "cp-3"  # the old meaning: the newest


def test_plain_undo_with_nothing_to_undo_says_so(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    store.take(kind="run", command="python3 -m pytest")
    with raises_code(NOTHING_TO_UNDO) as caught:
        store.undo()
    assert caught.value.code == "NOTHING_TO_UNDO"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"m" * 32).decode())
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(project))
    return project


def _group() -> CanalGroup:
    group = CanalGroup("canal")
    checkpoint_cmd.register(group)
    return group


def test_the_agents_prune_keeps_the_floor(project: Path) -> None:
    store = Services(project).checkpoints
    cp = _destroy(project, store.take)
    for i in range(101):
        (project / "t").write_text(f"{i}\n")
        store.take(kind="run", command=f"echo {i} > t")
    shown = CliRunner().invoke(_group(), ["checkpoints", "--prune", "--json"])  # no terminal: the agent
    assert shown.exit_code == 0, shown.output
    assert cp not in json.loads(shown.stdout)["pruned"]
    assert cp in [c.id for c in Services(project).checkpoints.list()]


def test_the_agent_cannot_prune_inside_the_floor(project: Path) -> None:
    store = Services(project).checkpoints
    cp = _destroy(project, store.take)
    store.take(kind="run", command="ls -l > listing")
    shown = CliRunner().invoke(_group(), ["checkpoints", "--prune", "--before", "cp-2"])
    assert shown.exit_code == 2, shown.output
    assert shown.stderr.startswith("CHECKPOINT_PRUNE_REFUSED"), shown.stderr
    assert "Next:" in shown.stderr
    assert cp in [c.id for c in Services(project).checkpoints.list()]


def test_a_full_floor_is_not_pruned_again_at_every_checkpoint(workspace: Path, make_store: MakeStore,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.host.checkpoints import retention

    store = make_store(keep=10, floor_count=1)
    calls: list[int] = []
    real = retention.prune
    monkeypatch.setattr(retention, "prune", lambda s, n, **kw: calls.append(n) or real(s, n, **kw))
    for i in range(60):
        (workspace / "t").write_text(f"{i}\n")
        store.take(kind="run")
    assert len(store.list()) == 60  # all inside the floor (the last 24 hours)
    assert 3 <= len(calls) <= 20, calls  # growing by a tenth between prunes, not one per checkpoint


def test_the_floor_alone_keeps_an_unpinned_checkpoint(workspace: Path, make_store: MakeStore) -> None:
    store = make_store()
    (workspace / "precious.txt").write_text("irreplaceable\n")
    cp = store.take(kind="file", command="write precious.txt").id  # Canal's own write: not pinned
    (workspace / "precious.txt").write_text("overwritten\n")
    for i in range(120):
        (workspace / "t").write_text(f"{i}\n")
        store.take(kind="run", command=f"echo {i} > t")
    store.undo(cp)
    assert (workspace / "precious.txt").read_text() == "irreplaceable\n"


def test_a_person_prunes_inside_the_floor(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.cli.shared import App

    store = Services(project).checkpoints
    cp = _destroy(project, store.take)
    store.take(kind="run", command="ls -l > listing")
    monkeypatch.setattr(App, "is_person", lambda self: True)  # a terminal on stdin and stdout
    shown = CliRunner().invoke(_group(), ["checkpoints", "--prune", "--before", "cp-2", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["pruned"] == [cp]
    assert [c.id for c in Services(project).checkpoints.list()] == ["cp-2"]
    with raises_code(CHECKPOINT_PRUNED):
        Services(project).checkpoints.undo(cp)


def test_undo_last_command_keeps_the_old_meaning_in_the_cli(project: Path) -> None:
    store = Services(project).checkpoints
    (project / "a.txt").write_text("a\n")
    store.take(kind="file", command="canal edit a.txt")
    (project / "a.txt").write_text("b\n")
    store.take(kind="run", command="python3 -m pytest")
    plain = CliRunner().invoke(_group(), ["undo"])
    assert plain.exit_code == 0, plain.output
    assert "undid: canal edit a.txt" in plain.stdout
    assert "skipped cp-2: nothing changed after them" in plain.stdout
    assert (project / "a.txt").read_text() == "a\n"
    last = CliRunner().invoke(_group(), ["undo", "--last-command"])
    assert last.exit_code == 0, last.output
    assert "restored 1 path(s) to cp-3" in last.stdout  # the newest: the undo's own checkpoint
    both = CliRunner().invoke(_group(), ["undo", "cp-1", "--last-command"])
    assert both.exit_code == 2
