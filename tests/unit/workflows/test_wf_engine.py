"""The state machine over a scripted executor and the in-memory store: start, gates, chains, views."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wf_helpers import Events, make_engine, write_workflow

from canal.workflows.errors import (
    CONFIRMATION_PENDING,
    GATE_REJECTED,
    RUN_CONFLICT,
    RUN_FINISHED,
    WORKFLOW_INVALID,
)
from canal.workflows.fakes import ScriptedExecutor
from canal.workflows.memory_store import MemoryRunStore
from canal.workflows.ports import StepOutcome
from tests.error_codes import raises_code

GOOD = {"name": "demo", "token": "s3cr3t-token-value", "tier": "team"}
BUILT = StepOutcome(status="ok", exit_code=0, result={"id": "b-1", "tags": ["x", "y"]},
                    output='{"id": "b-1"} token=s3cr3t-token-value')


def test_start_returns_only_the_first_step_and_pins_the_definition(roots: list[Path],
                                                                    store: MemoryRunStore) -> None:
    engine = make_engine(roots, store, ScriptedExecutor())
    view = engine.start("basic")
    assert view.status == "waiting_input"
    assert view.version == "2"
    assert view.definition_digest.startswith("sha256:")
    assert view.step.id == "ask"
    assert view.step.instructions == "Ask for the project name and token."
    fields = {f.name: f for f in view.step.fields}
    assert list(fields) == ["name", "token", "tier", "count"]
    assert fields["name"].required
    assert fields["name"].description == "Project name"
    assert fields["tier"].enum == ["free", "team"]
    assert fields["tier"].default == "free"
    assert [(a.kind, dict(a.args)) for a in view.next] == [
        ("workflow.advance", {"run_id": view.run_id, "gate": {"name": "<string>", "token": "<string>"}})]
    assert "build" not in view.model_dump_json()


def test_missing_and_invalid_fields_are_listed_and_nothing_is_saved(roots: list[Path],
                                                                     store: MemoryRunStore) -> None:
    engine = make_engine(roots, store, ScriptedExecutor())
    run = engine.start("basic").run_id
    writes = store.writes
    with raises_code(GATE_REJECTED) as caught:
        engine.advance(run, {"name": "Bad Name!", "tier": "gold", "count": True, "extra": 1})
    details = caught.value.details
    assert details["missing"] == [{"field": "token", "desc": "API token"}]
    assert {p["field"] for p in details["invalid"]} == {"name", "tier", "count"}
    assert details["dropped"] == ["extra"]
    assert "missing token: API token" in caught.value.message
    assert store.writes == writes
    assert engine.current(run).step is not None
    assert engine.current(run).status == "waiting_input"


def test_valid_advance_chains_automated_steps_until_the_notification(roots: list[Path],
                                                                      store: MemoryRunStore) -> None:
    published = StepOutcome(status="ok", result="published")
    executor = ScriptedExecutor.of({"build": [BUILT], "publish": [published]})
    events = Events()
    engine = make_engine(roots, store, executor, events)
    run = engine.start("basic").run_id
    view = engine.advance(run, {**GOOD, "unknown": "x"})
    assert view.accepted == ["name", "tier", "token"]
    assert view.dropped == ["unknown"]
    assert [r.id for r in view.ran] == ["build", "publish"]
    assert view.status == "waiting_input"
    assert view.step is not None
    assert view.step.id == "done"
    assert view.step.instructions == "Built b-1 for demo with token ****."
    assert "s3cr3t" not in view.model_dump_json()
    build, publish = executor.requests
    assert build.argv == ("make-thing", "--name", "demo", "team")
    assert build.env == {"TOKEN": "s3cr3t-token-value"}
    assert build.secrets == ("s3cr3t-token-value",)
    assert publish.tool == "publish"
    assert publish.inputs == {"id": "b-1", "tags": ["x", "y"], "label": "build b-1 for demo"}
    done = engine.advance(run)
    assert done.status == "completed"
    assert done.step is None
    assert "workflow.run.completed" in events.names()
    with raises_code(RUN_FINISHED):
        engine.advance(run)


def test_current_gives_a_fresh_session_everything_with_secrets_masked(roots: list[Path],
                                                                      store: MemoryRunStore) -> None:
    executor = ScriptedExecutor.of({"build": [BUILT]})
    engine = make_engine(roots, store, executor)
    run = engine.start("basic").run_id
    engine.advance(run, GOOD)
    view = engine.current(run)
    assert view.status == "waiting_input"
    assert [c.id for c in view.completed] == ["ask", "build", "publish"]
    ask = view.completed[0]
    assert ask.gate == {"name": "demo", "token": "****", "tier": "team"}
    assert view.completed[1].result == {"id": "b-1", "tags": ["x", "y"]}
    assert view.step is not None
    assert view.step.id == "done"
    assert "s3cr3t" not in view.model_dump_json()


def test_sensitive_values_are_marked_for_sealing_and_absent_from_events(roots: list[Path],
                                                                       store: MemoryRunStore) -> None:
    events = Events()
    engine = make_engine(roots, store, ScriptedExecutor.of({"build": [BUILT]}), events)
    run = engine.start("basic").run_id
    engine.advance(run, GOOD)
    paths = set(store.sensitive[run])
    assert ("gate", "ask", "token") in paths
    assert ("gate", "ask", "name") not in paths
    assert {("results", "build"), ("results", "publish"), ("steps", "build", "output")} <= paths
    assert "s3cr3t" not in json.dumps(events)
    names = events.names()
    assert names[:3] == ["workflow.run.started", "workflow.gate.accepted", "workflow.step.started"]
    assert names.count("workflow.step.completed") == 2


def test_each_automated_step_is_saved_started_before_it_runs(roots: list[Path],
                                                             store: MemoryRunStore) -> None:
    seen: list[str] = []

    def spy(request):  # type: ignore[no-untyped-def]
        doc = store.load(request.run_id).doc
        seen.append(doc["steps"][request.step_id]["status"] + "/" + doc["status"])
        return BUILT

    engine = make_engine(roots, store, ScriptedExecutor.of({"build": [spy], "publish": [spy]}))
    run = engine.start("basic").run_id
    engine.advance(run, GOOD)
    assert seen == ["started/running", "started/running"]
    doc = store.load(run).doc
    assert doc["steps"]["build"]["status"] == "completed"
    assert doc["owner"] is None


def test_the_run_keeps_the_definition_it_started_with(roots: list[Path], store: MemoryRunStore) -> None:
    engine = make_engine(roots, store, ScriptedExecutor.of({"build": [BUILT]}))
    run = engine.start("basic").run_id
    done = roots[0] / "basic" / "references" / "04-done.md"
    done.write_text("---\nid: done\ntype: notification\n---\nChanged text.\n")
    assert engine.start("basic").definition_digest != store.load(run).doc["definition_digest"]
    view = engine.advance(run, GOOD)
    assert view.step is not None
    assert view.step.instructions.startswith("Built b-1")


def test_an_invalid_workflow_cannot_start(tmp_path: Path, store: MemoryRunStore) -> None:
    write_workflow(tmp_path, "broken", {"01-a.md": "---\nid: a\ntype: automated\n---\n"})
    engine = make_engine([tmp_path], store, ScriptedExecutor())
    with raises_code(WORKFLOW_INVALID) as caught:
        engine.start("broken")
    assert caught.value.details["problems"][0]["file"] == "references/01-a.md"
    assert store.list_ids() == []


def test_confirmation_point_waits_and_resumes_with_the_token(roots: list[Path],
                                                             store: MemoryRunStore) -> None:
    ask = StepOutcome(status="confirmation_required", confirmation_token="c_123",
                      confirmation_reason="make-thing matches rule x")
    executor = ScriptedExecutor.of({"build": [ask, BUILT]})
    events = Events()
    engine = make_engine(roots, store, executor, events)
    run = engine.start("basic").run_id
    view = engine.advance(run, GOOD)
    assert view.status == "waiting_confirmation"
    assert view.confirmation is not None
    assert view.confirmation.token == "c_123"
    assert view.hint == "ask the user"
    assert [(a.kind, dict(a.args)) for a in view.next] == [
        ("workflow.advance", {"run_id": run, "confirm": "c_123"})]
    assert ("confirmation", "token") in store.sensitive[run]
    with raises_code(CONFIRMATION_PENDING) as caught:
        engine.advance(run)
    assert caught.value.exit_code == 120
    with pytest.raises(Exception, match="not the one") as wrong:
        engine.advance(run, confirm="c_999")
    assert getattr(wrong.value, "code", "") == "APPROVAL_INVALID"
    resumed = engine.advance(run, confirm="c_123")
    assert resumed.status == "waiting_input"
    assert resumed.confirmation is None
    assert [r.confirm_token for r in executor.for_step("build")] == [None, "c_123"]
    assert executor.for_step("publish")[0].confirm_token is None
    assert "workflow.step.confirmation_required" in events.names()


def test_unattended_run_fails_at_a_confirmation_point(roots: list[Path], store: MemoryRunStore) -> None:
    ask = StepOutcome(status="confirmation_required", confirmation_token="c_1", confirmation_reason="why")
    executor = ScriptedExecutor.of({"build": [ask]})
    engine = make_engine(roots, store, executor)
    run = engine.start("basic", unattended=True).run_id
    view = engine.advance(run, GOOD)
    assert view.status == "failed"
    assert view.failure is not None
    assert view.failure.code == "CONFIRMATION_UNATTENDED"
    assert executor.requests[0].unattended is True


def test_stale_revision_is_refused(roots: list[Path], store: MemoryRunStore) -> None:
    engine = make_engine(roots, store, ScriptedExecutor())
    run = engine.start("basic").run_id
    stored = store.load(run)
    store.save(run, stored.doc, expected_revision=stored.revision, sensitive_paths=[])
    with raises_code(RUN_CONFLICT):
        store.save(run, stored.doc, expected_revision=stored.revision, sensitive_paths=[])


def test_abort_and_runs(roots: list[Path], store: MemoryRunStore) -> None:
    engine = make_engine(roots, store, ScriptedExecutor())
    first = engine.start("basic").run_id
    second = engine.start("basic").run_id
    assert engine.abort(first, reason="user changed mind").status == "aborted"
    statuses = {r.run_id: r.status for r in engine.runs()}
    assert statuses == {first: "aborted", second: "waiting_input"}
    with raises_code(RUN_FINISHED):
        engine.abort(first)
    assert [w.name for w in engine.list_workflows()] == ["basic"]


def test_a_workflow_that_starts_automated_is_ready_and_runs_on_advance(tmp_path: Path,
                                                                        store: MemoryRunStore) -> None:
    first = "---\nid: first\ntype: automated\nautomation:\n  run: [\"true\"]\n---\n"
    note = "---\nid: note\ntype: notification\n---\nFirst said {{result.first}}.\n"
    write_workflow(tmp_path, "auto", {"01-first.md": first, "02-note.md": note})
    executor = ScriptedExecutor.of({"first": [StepOutcome(status="ok", exit_code=0, result="hi")]})
    engine = make_engine([tmp_path], store, executor)
    start = engine.start("auto")
    assert start.status == "ready"
    assert executor.requests == []
    view = engine.advance(start.run_id, {"stray": 1})
    assert view.dropped == ["stray"]
    assert view.step is not None
    assert view.step.instructions == "First said hi."
    assert engine.advance(start.run_id).status == "completed"
