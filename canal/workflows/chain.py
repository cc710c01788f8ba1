"""Running automated steps: chain, retry, confirmation points, compensation and crash recovery.

Durability: a step is saved as ``started`` (with the owning process) before the executor is called and
saved as finished after, in one compare-and-swap write each. A run found ``running`` whose owner is
dead was interrupted: the step goes to ``needs_attention`` unless it is idempotent (then ``ready``,
and the next advance retries it). Nothing is ever re-run silently.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from canal.core.errors import POLICY_DENIED
from canal.workflows.errors import (
    CONFIRMATION_UNATTENDED,
    STEP_ERROR,
    STEP_FAILED,
    TemplateError,
)
from canal.workflows.model import StepDef
from canal.workflows.owner import Liveness, current_owner, process_alive
from canal.workflows.ports import (
    EventHook,
    RunStore,
    StepExecutor,
    StepOutcome,
    StepRequest,
    ToolCatalog,
    lookup_tool,
    no_events,
)
from canal.workflows.rundoc import Confirmation, Failure, RunDoc, now, sensitive_paths
from canal.workflows.templates import render_argv, render_env, render_value
from canal.workflows.views import context_of

StepEnd = Literal["ok", "stopped", "compensate"]


@dataclass
class Handle:
    """A loaded run and the revision it was loaded at (the expected revision of the next save)."""

    doc: RunDoc
    revision: int


@dataclass
class Runner:
    store: RunStore
    executor: StepExecutor
    catalog: ToolCatalog | None = None
    on_event: EventHook = no_events
    liveness: Liveness = process_alive
    sleep: Callable[[float], None] = time.sleep
    ran: list[str] = field(default_factory=list)

    def save(self, h: Handle) -> None:
        h.doc.updated_at = now()
        h.revision = self.store.save(h.doc.run_id, h.doc.to_json(), expected_revision=h.revision,
                                     sensitive_paths=sensitive_paths(h.doc))

    def event(self, h: Handle, name: str, **data: Any) -> None:
        self.on_event(name, {"run_id": h.doc.run_id, "workflow": h.doc.workflow, **data})

    # -- pointer --------------------------------------------------------------------------------
    def move_past(self, h: Handle, step: StepDef) -> None:
        """Point the run at the step after ``step`` and set the status that step needs."""
        following = h.doc.definition.next_main_step(step.id)
        h.doc.current_step = following.id if following else None
        h.doc.owner = None
        if following is None:
            h.doc.status = "completed"
        else:
            h.doc.status = "ready" if following.type == "automated" else "waiting_input"

    # -- chain ----------------------------------------------------------------------------------
    def chain(self, h: Handle, confirm_token: str | None = None) -> None:
        """Run automated steps from the current one until input is needed, the end, or a stop."""
        while h.doc.current_step is not None and h.doc.status in ("ready", "running"):
            step = h.doc.definition.step(h.doc.current_step)
            if step.type != "automated":
                break
            end = self.run_step(h, step, confirm_token)
            confirm_token = None
            if end == "stopped":
                return

    def run_step(self, h: Handle, step: StepDef, confirm_token: str | None) -> StepEnd:
        record = h.doc.record(step.id)
        first = record.attempts + 1
        while True:
            attempt = record.attempts + 1
            if attempt > first:
                self.sleep(step.retry.delay_before(attempt - first + 1))
            try:
                request = self.request(h.doc, step, attempt, confirm_token)
            except TemplateError as exc:
                return self.fail(h, step, TemplateError.code, exc.message)
            self.claim(h, step, attempt)
            outcome = self.execute(request)
            self.ran.append(step.id)
            if outcome.status != "confirmation_required":
                self._record(h, step, outcome)
            if outcome.status == "ok":
                return self.succeed(h, step, outcome)
            if outcome.status == "confirmation_required":
                return self.wait_for_confirmation(h, step, outcome)
            if outcome.status == "denied":
                return self.fail(h, step, POLICY_DENIED.code, outcome.reason or "policy denied the step")
            if attempt - first + 1 >= step.retry.attempts:
                failed = outcome.status == "failed"
                code = STEP_FAILED.code if failed else outcome.code or STEP_ERROR.code
                return self.fail(h, step, code, outcome.reason or f"exit code {outcome.exit_code}")
            self.event(h, "workflow.step.retry", step=step.id, attempt=attempt, status=outcome.status)

    def request(self, doc: RunDoc, step: StepDef, attempt: int, confirm_token: str | None) -> StepRequest:
        auto = step.automation
        assert auto is not None
        ctx = context_of(doc)
        common: dict[str, Any] = {
            "run_id": doc.run_id, "step_id": step.id, "attempt": attempt, "env": render_env(auto.env, ctx),
            "timeout_s": auto.timeout_s, "confirm_token": confirm_token, "unattended": doc.unattended,
            "secrets": tuple(doc.sensitive_values()), "result_format": auto.result}
        if auto.run is not None:
            return StepRequest(argv=render_argv(auto.run, ctx), **common)
        inputs = render_value(auto.input_mapping, ctx)
        return StepRequest(tool=auto.tool, inputs=inputs, **common)

    def claim(self, h: Handle, step: StepDef, attempt: int) -> None:
        record = h.doc.record(step.id)
        record.status, record.attempts = "started", attempt
        record.started_at, record.finished_at = now(), None
        h.doc.status, h.doc.owner, h.doc.confirmation = "running", current_owner(), None
        self.save(h)
        self.event(h, "workflow.step.started", step=step.id, attempt=attempt)

    def execute(self, request: StepRequest) -> StepOutcome:
        try:
            return self.executor.execute(request)
        except Exception as exc:  # an executor that raises is an error outcome, retried like one
            message = getattr(exc, "message", None) or str(exc)
            return StepOutcome(status="error", reason=f"{type(exc).__name__}: {message}")

    def _record(self, h: Handle, step: StepDef, outcome: StepOutcome) -> None:
        record = h.doc.record(step.id)
        record.outcome, record.exit_code, record.finished_at = outcome.status, outcome.exit_code, now()
        record.output = outcome.output
        record.error = None if outcome.status == "ok" else (outcome.reason or None)
        record.status = "completed" if outcome.status == "ok" else "failed"

    def succeed(self, h: Handle, step: StepDef, outcome: StepOutcome) -> StepEnd:
        h.doc.results[step.id] = outcome.result
        if step.compensation:
            h.doc.owner, h.doc.status, h.doc.current_step = None, "failed", None
            if h.doc.failure is not None:
                h.doc.failure.compensated_by = step.id
        else:
            self.move_past(h, step)
        self.save(h)
        self.event(h, "workflow.step.completed", step=step.id, exit_code=outcome.exit_code)
        if step.compensation:
            self.event(h, "workflow.run.failed", step=h.doc.failure.step if h.doc.failure else step.id,
                       compensated_by=step.id)
            return "stopped"
        return "ok"

    def wait_for_confirmation(self, h: Handle, step: StepDef, outcome: StepOutcome) -> StepEnd:
        record = h.doc.record(step.id)
        record.attempts -= 1  # nothing ran
        if h.doc.unattended:
            record.status = "failed"
            return self.fail(h, step, CONFIRMATION_UNATTENDED.code,
                             "policy requires confirmation and the run is unattended: "
                             + (outcome.confirmation_reason or outcome.reason))
        record.status = "awaiting_confirmation"
        h.doc.status, h.doc.owner = "waiting_confirmation", None
        h.doc.confirmation = Confirmation(step=step.id, token=outcome.confirmation_token or "",
                                          reason=outcome.confirmation_reason or outcome.reason,
                                          rule_ids=list(outcome.confirmation_rule_ids),
                                          expires_at=outcome.confirmation_expires_at,
                                          approval=outcome.confirmation_approval)
        self.save(h)
        self.event(h, "workflow.step.confirmation_required", step=step.id)
        return "stopped"

    def fail(self, h: Handle, step: StepDef, code: str, reason: str) -> StepEnd:
        record = h.doc.record(step.id)
        record.status, record.finished_at = "failed", now()
        record.error = record.error or reason
        h.doc.owner = None
        self.event(h, "workflow.step.failed", step=step.id, code=code)
        if step.compensation:
            h.doc.status = "needs_attention"
            h.doc.attention = f"compensation step {step.id} failed ({code}): {reason}"
            self.save(h)
            self.event(h, "workflow.run.needs_attention", step=step.id, code=code)
            return "stopped"
        h.doc.failure = Failure(step=step.id, code=code, reason=reason)
        if step.on_failure != "stop":
            # Saved pointing at the compensation step, so a crash now never re-runs the failed step.
            h.doc.current_step, h.doc.status = step.on_failure, "ready"
            self.save(h)
            return "compensate"
        h.doc.status = "failed"
        self.save(h)
        self.event(h, "workflow.run.failed", step=step.id, code=code)
        return "stopped"

    # -- recovery -------------------------------------------------------------------------------
    def idempotent(self, step: StepDef) -> bool:
        if step.idempotent:
            return True
        auto = step.automation
        if auto is None or auto.tool is None or self.catalog is None:
            return False
        tool = lookup_tool(self.catalog, auto.tool)
        return bool(tool and tool.idempotent)

    def recover(self, h: Handle) -> bool:
        """Settle a run whose owner died mid-chain. Returns True when the run was changed."""
        doc = h.doc
        if doc.status != "running" or (doc.owner is not None and self.liveness(doc.owner)):
            return False
        step = doc.definition.step(doc.current_step) if doc.current_step else None
        record = doc.steps.get(step.id) if step else None
        doc.owner = None
        if step is None:
            doc.status = "completed"
        elif record is not None and record.status == "started":
            record.status = "interrupted"
            if self.idempotent(step):
                doc.status = "ready"
            else:
                doc.status = "needs_attention"
                doc.attention = (f"step {step.id} (attempt {record.attempts}) was started at "
                                 f"{record.started_at} and its process ended before it finished: "
                                 "it may or may not have taken effect")
        else:
            doc.status = "ready" if step.type == "automated" else "waiting_input"
        self.save(h)
        self.event(h, "workflow.run.recovered", step=step.id if step else None, status=doc.status)
        return True
