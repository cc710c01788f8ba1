"""Crash recovery: a started, unfinished step is never re-run silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from wf_helpers import BASIC, Events, catalog, make_engine, write_workflow

from canal.workflows.errors import RUN_BUSY, RUN_NEEDS_ATTENTION
from canal.workflows.fakes import ScriptedExecutor
from canal.workflows.memory_store import MemoryRunStore
from canal.workflows.ports import StepOutcome, StepRequest
from tests.error_codes import raises_code

GOOD = {"name": "demo", "token": "s3cr3t-token-value"}
BUILT = StepOutcome(status="ok", exit_code=0, result={"id": "b-1", "tags": []})


class Crash(BaseException):
    """Stands for the process dying mid-step (SIGKILL): nothing after it runs."""


def crash_on(step: str) -> ScriptedExecutor:
    def die(_request: StepRequest) -> StepOutcome:
        raise Crash

    return ScriptedExecutor.of({"build": [BUILT], step: [die]})


def crashed_run(roots: list[Path], store: MemoryRunStore, step: str, **kwargs: object) -> str:
    engine = make_engine(roots, store, crash_on(step), **kwargs)  # type: ignore[arg-type]
    run = engine.start("basic").run_id
    with pytest.raises(Crash):
        engine.advance(run, GOOD)
    return run


def test_live_owner_means_busy_not_crashed(roots: list[Path], store: MemoryRunStore) -> None:
    run = crashed_run(roots, store, "publish")
    engine = make_engine(roots, store, ScriptedExecutor(), liveness=lambda _owner: True)
    view = engine.current(run)
    assert view.status == "running"
    assert "another process" in view.hint
    assert [a.kind for a in view.next] == ["workflow.current"]
    with raises_code(RUN_BUSY):
        engine.advance(run)


def test_non_idempotent_step_goes_to_needs_attention(roots: list[Path], store: MemoryRunStore) -> None:
    run = crashed_run(roots, store, "publish")
    events = Events()
    executor = ScriptedExecutor()
    engine = make_engine(roots, store, executor, events, liveness=lambda _owner: False)
    view = engine.current(run)
    assert view.status == "needs_attention"
    assert view.attention is not None
    assert "publish (attempt 1)" in view.attention
    assert [c.id for c in view.completed] == ["ask", "build"]
    assert view.completed[1].result == {"id": "b-1", "tags": []}
    assert ("attention",) in store.sensitive[run]
    assert events.names() == ["workflow.run.recovered"]
    with raises_code(RUN_NEEDS_ATTENTION) as caught:
        engine.advance(run)
    assert [(a.kind, a.args.get("retry")) for a in caught.value.next] == [
        ("workflow.advance", True), ("workflow.abort", None)]
    assert executor.requests == []
    resumed = engine.advance(run, retry=True)
    assert [r.id for r in resumed.ran] == ["publish"]
    assert resumed.status == "waiting_input"
    assert executor.requests[0].attempt == 2


def test_idempotent_tool_is_retried_on_the_next_advance(roots: list[Path], store: MemoryRunStore) -> None:
    run = crashed_run(roots, store, "publish")
    executor = ScriptedExecutor()
    engine = make_engine(roots, store, executor, catalog=catalog(idempotent=True), liveness=lambda _o: False)
    view = engine.current(run)
    assert view.status == "ready"
    assert [a.kind for a in view.next] == ["workflow.advance"]
    assert executor.requests == []
    resumed = engine.advance(run)
    assert [r.id for r in resumed.ran] == ["publish"]
    assert resumed.status == "waiting_input"


def test_idempotent_step_flag_is_enough(tmp_path: Path, store: MemoryRunStore) -> None:
    build = BASIC["02-build.md"].replace("type: automated\n", "type: automated\nidempotent: true\n")
    write_workflow(tmp_path, "basic", {**BASIC, "02-build.md": build})
    run = crashed_run([tmp_path], store, "build")
    executor = ScriptedExecutor.of({"build": [BUILT]})
    engine = make_engine([tmp_path], store, executor, liveness=lambda _o: False)
    assert engine.current(run).status == "ready"
    assert [r.id for r in engine.advance(run).ran] == ["build", "publish"]


def test_crash_between_steps_resumes_without_rerunning_the_finished_one(roots: list[Path],
                                                                        store: MemoryRunStore) -> None:
    run = crashed_run(roots, store, "publish")
    doc = store.load(run)
    # Simulate a crash right after build completed and before publish was claimed.
    data = doc.doc
    data["steps"].pop("publish")
    data["current_step"] = "publish"
    store.save(run, data, expected_revision=doc.revision, sensitive_paths=[])
    executor = ScriptedExecutor()
    engine = make_engine(roots, store, executor, liveness=lambda _o: False)
    assert engine.current(run).status == "ready"
    view = engine.advance(run)
    assert [r.id for r in view.ran] == ["publish"]
    assert [r.step_id for r in executor.requests] == ["publish"]
