"""``Tasks``: background tasks of one project as the Python API and the front ends use them
(``Canal.tasks``). A start goes through the same pipeline as ``canal run`` (trusted configuration,
policy, confirmation, checkpoint, intent record), then the task runs in the sandbox's background agent
and the call returns at once with its id.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from canal.core.next import Say, act
from canal.host.audit.dangling import runner
from canal.presenter import PresenterConfig
from canal.runtime.run.pipeline import Admitted, Pipeline, RunRequest
from canal.runtime.run.result import RunResult
from canal.runtime.sandboxes.forward import Forwarder, ForwardEvent, ForwardSpec, parse_forward
from canal.runtime.sandboxes.start import OUTPUT_MOUNT, SandboxRef, sandbox_user, uid_gid
from canal.runtime.services import Services
from canal.runtime.tasks.errors import TASK_NAME_INVALID, TaskError, TaskWaitTimeout
from canal.runtime.tasks.manager import Running, TaskManager
from canal.runtime.tasks.models import ForwardView, TaskRecord, new_task_id, now_iso
from canal.runtime.tasks.output import TaskLog, log_name, offset_at
from canal.runtime.tasks.store import valid_id
from canal.runtime.tasks.view import LOG_CHUNK, TaskView, log_text, render
from canal.sandbox.docker.background import BackgroundBackend, TaskSpec

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")


@dataclass(frozen=True)
class TaskStart:
    """What ``task start`` did: started (``task``), or refused before anything ran (``refusal``)."""

    status: Literal["started", "confirmation_required", "denied"]
    task: TaskRecord | None = None
    refusal: RunResult | None = None

    def to_json(self) -> dict[str, Any]:
        if self.task is not None:
            return {"status": self.status, "task": self.task.to_json()}
        assert self.refusal is not None
        return {**self.refusal.to_json(), "status": self.status}


@dataclass(frozen=True)
class LogPiece:
    text: str  # redacted
    offset: int  # where it starts in the task's output
    next_offset: int  # where to read from next
    running: bool


class Tasks:
    def __init__(self, pipeline: Pipeline, services: Services, manager: TaskManager,
                 ref: Callable[[str | None], SandboxRef], *, actor: str, unattended: bool,
                 persistent: bool) -> None:
        self.pipeline = pipeline
        self.services = services
        self.manager = manager
        self.ref = ref
        self.actor = actor
        self.unattended = unattended
        self.persistent = persistent  # the tasks outlive this object (they live in the Canal server)

    @property
    def backend(self) -> BackgroundBackend:
        return self.manager.backend

    # starting ----------------------------------------------------------------------------------
    def start(self, command: str, *, name: str | None = None, timeout_s: float | None = None,
              sandbox: str | None = None, confirm: str | None = None, unattended: bool | None = None,
              forward: Sequence[str] = (), say: Say | None = None) -> TaskStart:
        """Start ``command`` (bash, in the session's cwd and variables) as a background task. ``say``: the
        caller's words for a refusal's next step (its text is composed with them)."""
        _check_name(name)
        ref = self.ref(sandbox)
        settings = self.services.config.tasks
        specs = [parse_forward(f) for f in forward]  # a malformed forward is refused before anything
        task_id = new_task_id()
        with self.manager.slot(ref.name, settings.max_running):
            forwards = [self._forwarder(ref, spec, task_id) for spec in specs]  # a taken port: refused now
            try:
                options = {"name": name, "timeout": timeout_s, "forward": list(forward) or None}
                req = RunRequest(command=command, ref=ref, confirm=confirm, actor=self.actor, task=task_id,
                                 unattended=self.unattended if unattended is None else unattended, say=say,
                                 task_options={k: v for k, v in options.items() if v is not None})
                admitted = self.pipeline.admit(req)
                if isinstance(admitted, RunResult):
                    for fwd in forwards:
                        fwd.listener.close()
                    status: Literal["confirmation_required", "denied"] = (
                        "denied" if admitted.status == "denied" else "confirmation_required")
                    return TaskStart(status, refusal=admitted)
                record = self._launch(task_id, name, ref, req, admitted, timeout_s or settings.timeout,
                                      settings.output_cap, forwards)
            except BaseException:
                for fwd in forwards:
                    fwd.listener.close()
                raise
        return TaskStart("started", task=record)

    def _forwarder(self, ref: SandboxRef, spec: ForwardSpec, task_id: str) -> Forwarder:
        return Forwarder(self.backend, ref.container, ref.name, spec, audit=self._audit, task=task_id)

    def _launch(self, task_id: str, name: str | None, ref: SandboxRef, req: RunRequest, admitted: Admitted,
                timeout_s: float, cap: int, forwards: list[Forwarder]) -> TaskRecord:
        owner = uid_gid(sandbox_user(self.services)) if os.geteuid() == 0 else None
        log_file = TaskLog(self.services.outputs_dir(ref.name), task_id, owner,
                           self.services.redactor.redact_keep_lines)
        record = TaskRecord(
            id=task_id, project=str(self.services.project_dir), name=name, sandbox=ref.name,
            command=admitted.redact(req.text), started_at=now_iso(),
            timeout_s=timeout_s, output_cap=cap, output_file=f"{OUTPUT_MOUNT}/{log_name(task_id)}",
            forwards=[ForwardView(host=f.address, port=f.spec.port) for f in forwards],
            checkpoint=admitted.checkpoint.id if admitted.checkpoint else None,
            audit_started=admitted.started, actor=self.actor, runner=runner())
        spec = TaskSpec(command=req.text, timeout_s=timeout_s, output_cap=cap, env=admitted.git_env)
        started = self.manager.launch(record, log_file, ref.container, spec, admitted.state.digest(),
                                      [f.start() for f in forwards])
        return started

    def _audit(self, event: str, data: dict[str, object]) -> object:
        return self.services.audit.append(event, data, actor=self.actor)

    # reading -----------------------------------------------------------------------------------
    def resolve(self, task: str) -> TaskRecord:
        """A task by id, or by name (the newest task of that name)."""
        if valid_id(task) or not NAME.match(task):
            return self.manager.get(task)
        named = [r for r in self.manager.list() if r.name == task]
        if not named:
            raise self.manager._not_found(task)
        return named[-1]

    def list(self, sandbox: str | None = None) -> list[TaskRecord]:
        return self.manager.list(sandbox)

    def log_path(self, record: TaskRecord) -> Path:
        return self.services.outputs_dir(record.sandbox) / log_name(record.id)

    def show(self, task: str, presenter: PresenterConfig | None = None) -> TaskView:
        record = self.resolve(task)
        self._settle(record)
        return render(record, self.log_path(record), presenter or self.services.config.presenter,
                      self.services.redactor)

    def read(self, task: str, *, offset: int = 0, since_s: float | None = None,
             limit: int = LOG_CHUNK) -> LogPiece:
        """Output from ``offset`` (or from ``since_s`` seconds ago), at most ``limit`` bytes, whole lines."""
        record = self.resolve(task)
        running = self._settle(record)
        offset = self._start_offset(record, offset, since_s)
        text, after = log_text(self.log_path(record), offset, limit, self.services.redactor,
                               final=running is None)
        return LogPiece(text, offset, after, running is not None)

    def _settle(self, record: TaskRecord) -> Running | None:
        """A running task's log with the lines it held back written, when its output is quiet."""
        running = self.manager.running(record.id)
        if running is not None:
            running.log.settle()
        return running

    def _start_offset(self, record: TaskRecord, offset: int, since_s: float | None) -> int:
        if since_s is None:
            return max(0, offset)
        running = self.manager.running(record.id)
        marks = list(running.log.marks) if running is not None else record.marks
        end = running.log.size if running is not None else record.output_bytes
        return offset_at(marks, time.time() - since_s, end)

    def follow(self, task: str, *, offset: int = 0, since_s: float | None = None,
               stop: threading.Event | None = None) -> Iterator[str]:
        """Text as the task writes it, until it ends (or ``stop`` is set)."""
        record = self.resolve(task)
        path = self.log_path(record)
        offset = self._start_offset(record, offset, since_s)
        running = self.manager.running(record.id)
        while True:
            ended = running is None or running.done.is_set()
            text, offset = log_text(path, offset, LOG_CHUNK, self.services.redactor, final=ended)
            if text:
                yield text
                continue
            if ended or (stop is not None and stop.is_set()):
                return
            assert running is not None
            running.log.wait(offset, 0.5)

    def wait(self, task: str, timeout_s: float | None = None,
             stop: threading.Event | None = None) -> TaskRecord:
        """Until the task ends; ``TaskWaitTimeout`` after ``timeout_s`` (the task goes on)."""
        record = self.resolve(task)
        running = self.manager.running(record.id)
        if running is None:
            return record
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not running.done.wait(0.2):
            if stop is not None and stop.is_set():
                msg = f"Stopped waiting for task {record.id}; it goes on."
                raise TaskWaitTimeout(msg, next=act("task.wait", task=record.id), details={"task": record.id})
            if deadline is not None and time.monotonic() >= deadline:
                msg = f"Task {record.id} is still running after {timeout_s:g}s of waiting (it goes on)."
                raise TaskWaitTimeout(msg, hint="wait longer, or cancel it",
                                      next=[act("task.wait", task=record.id, timeout=600),
                                            act("task.cancel", task=record.id)], details={"task": record.id})
        return running.record

    def cancel(self, task: str) -> TaskRecord:
        return self.manager.cancel(self.resolve(task).id)

    # forwarding --------------------------------------------------------------------------------
    def forward(self, spec: str, *, sandbox: str | None = None,
                on_event: Callable[[ForwardEvent], None] | None = None) -> Forwarder:
        """Listen on the host's loopback and relay each connection to the sandbox (started; close it)."""
        ref = self.ref(sandbox)
        parsed = parse_forward(spec)
        if self.pipeline.backend.get(ref.container) is None:
            msg = f"Sandbox {ref.name} is not running: there is nothing to forward to."
            raise TaskError(msg, next=act("up", sandbox=ref.name), details={"sandbox": ref.name})
        return Forwarder(self.backend, ref.container, ref.name, parsed, audit=self._audit,
                         on_event=on_event).start()


def _check_name(name: str | None) -> None:
    if name is not None and not NAME.match(name):
        msg = f"Bad task name {name!r}: a letter, then letters, digits, '_', '.', '-' (at most 40)."
        raise TASK_NAME_INVALID(msg, hint="use a name such as devserver", details={"name": name})
