"""Retry with backoff, policy denial, compensation, runtime template errors, executor exceptions."""

from __future__ import annotations

from pathlib import Path

from wf_helpers import ASK, Events, make_engine, write_workflow

from canal.workflows.engine import Engine
from canal.workflows.fakes import ScriptedExecutor
from canal.workflows.memory_store import MemoryRunStore
from canal.workflows.ports import StepOutcome, StepRequest

GOOD = {"name": "demo", "token": "s3cr3t-token-value"}
FAIL = StepOutcome(status="failed", exit_code=1, output="boom", reason="exit code 1")
OK = StepOutcome(status="ok", exit_code=0, result={"ok": True})

STEP = """
---
id: {id}
type: automated
{extra}
automation:
  run: ["do", "{{{{gate.ask.name}}}}"]
  result: json
---
"""

UNDO = """
---
id: undo
type: automated
compensation: true
automation:
  run: ["undo", "{{gate.ask.name}}"]
---
"""


def engine_for(tmp_path: Path, store: MemoryRunStore, executor: ScriptedExecutor, extra: str,
               events: Events | None = None, sleeps: list[float] | None = None) -> Engine:
    steps = {"01-ask.md": ASK, "02-work.md": STEP.format(id="work", extra=extra),
             "03-after.md": STEP.format(id="after", extra=""), "99-undo.md": UNDO}
    write_workflow(tmp_path, "wf", steps)
    engine = make_engine([tmp_path], store, executor, events)
    if sleeps is not None:
        engine.sleep = sleeps.append
    return engine


def test_retry_with_backoff_then_success(tmp_path: Path, store: MemoryRunStore) -> None:
    executor = ScriptedExecutor.of({"work": [FAIL, FAIL, OK]})
    sleeps: list[float] = []
    events = Events()
    engine = engine_for(tmp_path, store, executor, "retry: { attempts: 3, backoff_s: 1.5 }", events, sleeps)
    run = engine.start("wf").run_id
    view = engine.advance(run, GOOD)
    assert view.status == "completed"
    assert [r.attempt for r in executor.for_step("work")] == [1, 2, 3]
    assert sleeps == [1.5, 3.0]
    assert events.names().count("workflow.step.retry") == 2
    assert view.ran[0].attempts == 3


def test_retries_exhausted_fails_the_run_and_stops(tmp_path: Path, store: MemoryRunStore) -> None:
    executor = ScriptedExecutor.of({"work": [FAIL]})
    engine = engine_for(tmp_path, store, executor, "retry: { attempts: 2 }")
    run = engine.start("wf").run_id
    view = engine.advance(run, GOOD)
    assert view.status == "failed"
    assert view.failure is not None
    assert (view.failure.step, view.failure.code) == ("work", "STEP_FAILED")
    assert len(executor.for_step("work")) == 2
    assert executor.for_step("after") == []
    assert executor.for_step("undo") == []
    assert view.ran[0].output == "boom"


def test_denied_is_not_retried(tmp_path: Path, store: MemoryRunStore) -> None:
    denied = StepOutcome(status="denied", reason="rule no-do")
    executor = ScriptedExecutor.of({"work": [denied]})
    engine = engine_for(tmp_path, store, executor, "retry: { attempts: 3 }")
    view = engine.advance(engine.start("wf").run_id, GOOD)
    assert view.failure is not None
    assert view.failure.code == "POLICY_DENIED"
    assert len(executor.requests) == 1


def test_on_failure_runs_the_compensation_step_then_fails(tmp_path: Path, store: MemoryRunStore) -> None:
    executor = ScriptedExecutor.of({"work": [FAIL]})
    engine = engine_for(tmp_path, store, executor, "on_failure: undo")
    run = engine.start("wf").run_id
    view = engine.advance(run, GOOD)
    assert [r.id for r in view.ran] == ["work", "undo"]
    assert view.status == "failed"
    assert view.failure is not None
    assert view.failure.compensated_by == "undo"
    assert executor.for_step("undo")[0].argv == ("undo", "demo")
    assert executor.for_step("after") == []


def test_failed_compensation_needs_attention(tmp_path: Path, store: MemoryRunStore) -> None:
    executor = ScriptedExecutor.of({"work": [FAIL], "undo": [FAIL]})
    engine = engine_for(tmp_path, store, executor, "on_failure: undo")
    view = engine.advance(engine.start("wf").run_id, GOOD)
    assert view.status == "needs_attention"
    assert view.attention is not None
    assert "compensation step undo failed" in view.attention


def test_success_never_runs_the_compensation_step(tmp_path: Path, store: MemoryRunStore) -> None:
    executor = ScriptedExecutor()
    engine = engine_for(tmp_path, store, executor, "on_failure: undo")
    view = engine.advance(engine.start("wf").run_id, GOOD)
    assert view.status == "completed"
    assert [r.step_id for r in executor.requests] == ["work", "after"]


def test_executor_exception_is_an_error_outcome(tmp_path: Path, store: MemoryRunStore) -> None:
    def broken(_request: StepRequest) -> StepOutcome:
        raise OSError("sandbox vanished")

    executor = ScriptedExecutor.of({"work": [broken]})
    engine = engine_for(tmp_path, store, executor, "")
    view = engine.advance(engine.start("wf").run_id, GOOD)
    assert view.failure is not None
    assert view.failure.code == "STEP_ERROR"
    assert "sandbox vanished" in view.failure.reason


def test_missing_result_path_at_runtime_fails_the_step_without_running_it(tmp_path: Path,
                                                                          store: MemoryRunStore) -> None:
    later = STEP.format(id="after", extra="").replace("{{gate.ask.name}}", "{{result.work.missing.key}}")
    write_workflow(tmp_path, "wf", {"01-ask.md": ASK, "02-work.md": STEP.format(id="work", extra=""),
                                    "03-after.md": later})
    executor = ScriptedExecutor.of({"work": [OK]})
    engine = make_engine([tmp_path], store, executor)
    view = engine.advance(engine.start("wf").run_id, GOOD)
    assert view.failure is not None
    assert view.failure.code == "TEMPLATE_UNRESOLVED"
    assert "no 'missing'" in view.failure.reason
    assert executor.for_step("after") == []
