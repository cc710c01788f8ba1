"""The workflow engine's public API: start, advance, current, show, abort, runs, list.

The agent only submits gate data; the engine owns order, data flow and state. Containers, policy and
state are reached only through the protocols in ``workflows.ports``.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from canal.core.next import act
from canal.workflows.chain import Handle, Runner
from canal.workflows.errors import (
    CONFIRM_TOKEN_MISMATCH,
    CONFIRMATION_PENDING,
    GATE_REJECTED,
    RUN_BUSY,
    RUN_FINISHED,
    RUN_NEEDS_ATTENTION,
    WorkflowError,
)
from canal.workflows.fields import ValidationOutcome, validate_fields
from canal.workflows.hints import next_for
from canal.workflows.library import find_workflow, workflow_dirs
from canal.workflows.loader import load
from canal.workflows.model import Definition, StepDef
from canal.workflows.owner import Liveness, process_alive
from canal.workflows.ports import EventHook, RunStore, StepExecutor, ToolCatalog, no_events
from canal.workflows.rundoc import TERMINAL, RunDoc, new_run_id, parse_doc, sensitive_paths
from canal.workflows.validate import load_valid
from canal.workflows.views import (
    AdvanceView,
    CurrentView,
    RunSummary,
    StartView,
    WorkflowSummary,
    completed_view,
    confirmation_view,
    failure_view,
    run_view,
    step_view,
)


class Engine:
    def __init__(self, *, store: RunStore, executor: StepExecutor, catalog: ToolCatalog | None = None,
                 roots: Sequence[Path] = (), on_event: EventHook = no_events,
                 liveness: Liveness = process_alive, sleep: Callable[[float], None] = time.sleep) -> None:
        self.store = store
        self.executor = executor
        self.catalog = catalog
        self.roots = list(roots)
        self.on_event = on_event
        self.liveness = liveness
        self.sleep = sleep

    def _runner(self) -> Runner:
        return Runner(store=self.store, executor=self.executor, catalog=self.catalog, on_event=self.on_event,
                      liveness=self.liveness, sleep=self.sleep)

    def _open(self, run_id: str, runner: Runner) -> Handle:
        stored = self.store.load(run_id)
        handle = Handle(parse_doc(stored.doc), stored.revision)
        runner.recover(handle)
        return handle

    # -- definitions ----------------------------------------------------------------------------
    def list_workflows(self) -> list[WorkflowSummary]:
        return summarize_workflows(self.roots)

    def definition(self, name: str) -> Definition:
        """The workflow ``name``, loaded and validated (``WORKFLOW_NOT_FOUND`` / ``WORKFLOW_INVALID``)."""
        return load_valid(find_workflow(name, self.roots), self.catalog)

    # -- runs -----------------------------------------------------------------------------------
    def start(self, name: str, *, unattended: bool = False) -> StartView:
        """Pin the definition (content hash), create the run, return only the first step."""
        definition = load_valid(find_workflow(name, self.roots), self.catalog)
        first = definition.main_steps()[0]
        doc = RunDoc(run_id=new_run_id(), workflow=definition.meta.name, version=definition.meta.version,
                     definition_digest=definition.digest, definition=definition, current_step=first.id,
                     status="ready" if first.type == "automated" else "waiting_input", unattended=unattended)
        self.store.create(doc.run_id, doc.to_json(), sensitive_paths=sensitive_paths(doc))
        self.on_event("workflow.run.started", {"run_id": doc.run_id, "workflow": doc.workflow,
                                               "version": doc.version, "digest": doc.definition_digest,
                                               "unattended": unattended})
        return StartView(run_id=doc.run_id, workflow=doc.workflow, version=doc.version,
                         definition_digest=doc.definition_digest, status=doc.status,
                         step=step_view(doc, first), **_next(doc))

    def advance(self, run_id: str, gate_data: Mapping[str, Any] | None = None, *,
                confirm: str | None = None, retry: bool = False) -> AdvanceView:
        runner = self._runner()
        h = self._open(run_id, runner)
        data = dict(gate_data or {})
        accepted: list[str] = []
        dropped: list[str] = []
        status = h.doc.status
        if status in TERMINAL:
            msg = f"run {run_id} is {status}; it cannot advance"
            raise RUN_FINISHED(msg, next=act("workflow.show", run_id=run_id), details={"status": status})
        if status == "running":
            msg = f"run {run_id} is running step {h.doc.current_step} in another process"
            raise RUN_BUSY(msg, next=act("workflow.current", run_id=run_id),
                               details={"step": h.doc.current_step})
        if status == "needs_attention":
            self._retry_interrupted(h, runner, retry)
        elif status == "waiting_confirmation":
            self._check_token(h, confirm)
            h.doc.status = "ready"
            runner.chain(h, confirm_token=confirm)
        elif status == "waiting_input":
            accepted, dropped = self._submit(h, runner, data)
            data = {}
        if h.doc.status == "ready":
            runner.chain(h)
        elif h.doc.status == "completed" and status != "completed":
            runner.event(h, "workflow.run.completed")
        dropped = sorted({*dropped, *data})
        return self._advance_view(h.doc, accepted, dropped, runner.ran)

    def _retry_interrupted(self, h: Handle, runner: Runner, retry: bool) -> None:
        doc = h.doc
        if not retry:
            msg = f"run {doc.run_id} needs attention: {doc.attention}"
            raise RUN_NEEDS_ATTENTION(msg, **_next(doc), details={"step": doc.current_step})
        doc.status, doc.attention = "ready", None
        runner.event(h, "workflow.run.retry_requested", step=doc.current_step)

    def _check_token(self, h: Handle, confirm: str | None) -> None:
        pending = h.doc.confirmation
        assert pending is not None
        view = confirmation_view(h.doc)
        details = view.model_dump() if view else {}
        if confirm is None:
            msg = f"step {pending.step} waits for confirmation: {details.get('reason', '')}. Nothing was run."
            raise CONFIRMATION_PENDING(msg, **_next(h.doc), details=details)
        if not hmac.compare_digest(confirm.encode(), pending.token.encode()):
            # never the right token here: whoever guesses must not be handed it
            msg = f"that token is not the one step {pending.step} waits for. Nothing was run."
            raise CONFIRM_TOKEN_MISMATCH(
                msg, hint=f"ask the user, then use the token from the confirmation of step {pending.step}",
                next=act("workflow.advance", run_id=h.doc.run_id, confirm="TOKEN"),
                details={"step": pending.step, "run_id": h.doc.run_id})

    def _submit(self, h: Handle, runner: Runner, data: dict[str, Any]) -> tuple[list[str], list[str]]:
        assert h.doc.current_step is not None
        step = h.doc.definition.step(h.doc.current_step)
        outcome = validate_fields(step.fields, data)
        if not outcome.ok:
            runner.event(h, "workflow.gate.rejected", step=step.id, missing=[m for m, _ in outcome.missing],
                         invalid=[e.field for e in outcome.errors], dropped=outcome.dropped)
            raise _rejection(h.doc, step, outcome)
        record = h.doc.record(step.id)
        if step.type == "interactive":
            h.doc.gate[step.id] = outcome.values
        record.status = "completed"
        runner.move_past(h, step)
        runner.save(h)
        runner.event(h, "workflow.gate.accepted", step=step.id, fields=sorted(outcome.values),
                     dropped=outcome.dropped)
        return sorted(outcome.values), outcome.dropped

    def _advance_view(self, doc: RunDoc, accepted: list[str], dropped: list[str],
                      ran: list[str]) -> AdvanceView:
        ran_ids = list(dict.fromkeys(ran))
        step = doc.definition.step(doc.current_step) if doc.current_step else None
        show_step = step is not None and doc.status in ("waiting_input", "ready", "waiting_confirmation")
        return AdvanceView(
            run_id=doc.run_id, status=doc.status, accepted=accepted, dropped=dropped,
            ran=[run_view(doc, step_id, doc.steps[step_id]) for step_id in ran_ids],
            step=step_view(doc, step) if show_step and step is not None else None,
            confirmation=confirmation_view(doc), failure=failure_view(doc), attention=doc.attention,
            **_next(doc))

    def current(self, run_id: str) -> CurrentView:
        """Everything a fresh session needs: the current step, completed steps (masked), what is left."""
        h = self._open(run_id, self._runner())
        return self._current_view(h.doc, clip=True)

    def show(self, run_id: str) -> CurrentView:
        """Like ``current``, with full (unclipped) results of completed steps."""
        h = self._open(run_id, self._runner())
        return self._current_view(h.doc, clip=False)

    def _current_view(self, doc: RunDoc, *, clip: bool) -> CurrentView:
        step = doc.definition.step(doc.current_step) if doc.current_step else None
        completed = [completed_view(doc, s, doc.steps[s.id], clip=clip) for s in doc.definition.steps
                     if s.id in doc.steps and doc.steps[s.id].status in ("completed", "failed")]
        return CurrentView(
            run_id=doc.run_id, workflow=doc.workflow, version=doc.version, status=doc.status,
            step=step_view(doc, step) if step is not None and doc.status not in TERMINAL else None,
            completed=completed, confirmation=confirmation_view(doc), failure=failure_view(doc),
            attention=doc.attention, **_next(doc))

    def abort(self, run_id: str, *, reason: str = "") -> CurrentView:
        runner = self._runner()
        h = self._open(run_id, runner)
        if h.doc.status in TERMINAL:
            msg = f"run {run_id} is already {h.doc.status}"
            raise RUN_FINISHED(msg, next=act("workflow.show", run_id=run_id))
        if h.doc.status == "running":
            msg = f"run {run_id} is running step {h.doc.current_step} in another process"
            raise RUN_BUSY(msg, hint="wait", next=act("workflow.abort", run_id=run_id))
        h.doc.status, h.doc.confirmation, h.doc.owner = "aborted", None, None
        runner.save(h)
        runner.event(h, "workflow.run.aborted", step=h.doc.current_step, reason=reason)
        return self._current_view(h.doc, clip=True)

    def runs(self) -> list[RunSummary]:
        out = []
        for run_id in sorted(self.store.list_ids()):
            doc = parse_doc(self.store.load(run_id).doc)
            out.append(RunSummary(run_id=doc.run_id, workflow=doc.workflow, version=doc.version,
                                  status=doc.status, current_step=doc.current_step,
                                  updated_at=doc.updated_at))
        return sorted(out, key=lambda r: r.updated_at, reverse=True)


def _rejection(doc: RunDoc, step: StepDef, outcome: ValidationOutcome) -> WorkflowError:
    lines = [f"step {step.id} rejected the gate data; nothing was saved."]
    lines += [f"  missing {name}: {desc or step.fields[name].type}" for name, desc in outcome.missing]
    lines += [f"  invalid {p.field}: {p.problem}" for p in outcome.errors]
    if outcome.dropped:
        lines.append(f"  dropped (not in the gate): {', '.join(outcome.dropped)}")
    return GATE_REJECTED(
        "\n".join(lines), **_next(doc),
        details={"step": step.id,
                 "missing": [{"field": name, "desc": desc} for name, desc in outcome.missing],
                 "invalid": [{"field": p.field, "problem": p.problem} for p in outcome.errors],
                 "dropped": outcome.dropped})


def _next(doc: RunDoc) -> dict[str, Any]:
    """The ``hint`` and ``next`` actions for the run's state (of a view, or of an error)."""
    found = next_for(doc)
    return {"hint": found.lead, "next": found.actions}


def summarize_workflows(roots: Sequence[Path]) -> list[WorkflowSummary]:
    """Every workflow found under ``roots`` (an earlier root wins a name), one summary each."""
    out = []
    for name, folder in workflow_dirs(roots).items():
        d = load(folder).definition
        out.append(WorkflowSummary(name=name, description=d.meta.description if d else "(invalid)",
                                   version=d.meta.version if d else "?", steps=len(d.steps) if d else 0,
                                   path=str(folder)))
    return out
