"""Task records on disk, what a reader sees of a task's output, and process trees in the agent."""

from __future__ import annotations

from pathlib import Path

from canal.presenter import PresenterConfig
from canal.runtime.tasks.models import TaskRecord
from canal.runtime.tasks.output import offset_at
from canal.runtime.tasks.store import TaskStore, owner_project
from canal.runtime.tasks.view import footer, log_text, render
from canal.sandbox.agent.main import spared
from canal.sandbox.agent.procs import tree


def record(**update: object) -> TaskRecord:
    base = TaskRecord(id="t-abc123", project="/p", sandbox="default", command="pytest -q",
                      started_at="2026-01-01T00:00:00.000Z", timeout_s=3600, output_cap=1000,
                      output_file="/canal/output/task-t-abc123.log", audit_started="a-000001")
    return base.model_copy(update=update)


def test_records_round_trip_and_other_projects_are_named(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "a" / "tasks")
    store.save(record(state="exited", exit_code=0, reason="exited"))
    assert store.load("t-abc123") == record(state="exited", exit_code=0, reason="exited")
    assert (store.path("t-abc123").stat().st_mode & 0o777) == 0o600
    assert store.load("../../etc/passwd") is None  # an id is never a path
    assert owner_project([tmp_path / "b", tmp_path / "a"], "t-abc123") == "/p"
    assert owner_project([tmp_path / "b"], "t-abc123") is None


def test_endings_and_footers() -> None:
    assert record().ending() == ""
    assert record(reason="hard_timeout", timeout_s=2).ending() == "killed: hard timeout after 2s"
    assert record(reason="cancelled").ending() == "cancelled"
    running = record(duration_s=1.5, output_bytes=2048)
    assert footer(running) == "[running | 1.50s | task t-abc123 | 2 KiB so far]"
    ended = record(state="exited", exit_code=3, duration_s=2.0, name="tests")
    assert footer(ended) == "[exit:3 | 2.00s | task t-abc123 (tests)]"


def test_a_long_output_shows_head_tail_and_where_the_whole_is(tmp_path: Path) -> None:
    log = tmp_path / "task.log"
    log.write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    view = render(record(state="exited", exit_code=0, output_bytes=log.stat().st_size), log,
                  PresenterConfig(), lambda s: s.replace("line 7\n", "line [REDACTED]\n"))
    lines = view.text.splitlines()
    assert lines[0] == "line 1"
    assert "line 1000" in lines
    assert any("lines truncated. Full output: /canal/output/task-t-abc123.log" in line for line in lines)
    assert lines[-1].startswith("[exit:0 |")


def test_log_text_keeps_a_partial_line_until_it_ends(tmp_path: Path) -> None:
    log = tmp_path / "task.log"
    log.write_bytes(b"one\ntw")
    assert log_text(log, 0, 1024, str, final=False) == ("one\n", 4)
    assert log_text(log, 4, 1024, str, final=False) == ("", 4)
    assert log_text(log, 4, 1024, str, final=True) == ("tw", 6)
    assert log_text(tmp_path / "gone.log", 0, 10, str, final=True) == ("", 0)


def test_since_finds_the_first_output_after_a_time() -> None:
    marks = [(100.0, 0), (101.0, 50), (105.0, 90)]
    assert offset_at(marks, 100.5, 120) == 50
    assert offset_at(marks, 99.0, 120) == 0
    assert offset_at(marks, 106.0, 120) == 120


def test_the_sweep_spares_exactly_the_named_tree() -> None:
    parents = {1: 0, 10: 1, 11: 10, 12: 11, 20: 1, 21: 20, 30: 12}
    assert tree(frozenset({10}), parents) == {10, 11, 12, 30}
    assert tree(frozenset({99}), parents) == set()
    assert spared([10]) == frozenset()  # a pid alone is not enough: its start time must match too
    assert spared("10:5") == frozenset()
    assert spared([1, 2, 3]) == frozenset()
