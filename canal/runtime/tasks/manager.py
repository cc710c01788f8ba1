"""``TaskManager``: the background tasks of one project, from start to their recorded end.

In the server there is one per project, a resident of its shared resources, so a task outlives the call
that started it and every door (CLI, MCP, the Python API) sees the same tasks. In-process, the ``Canal``
that made it owns it (in its own resources), and its tasks end when that object closes.

A task's end is recorded where it happens (the background channel's reader thread): the log closes,
the record is rewritten, the audit log gets the ``run.completed`` of the task's ``run.started``, its
forwards close, and waiters wake.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canal.core.errors import ExitCode
from canal.core.next import act
from canal.host.audit import RunCompleted
from canal.host.audit.dangling import alive
from canal.runtime.sandboxes.forward import Forwarder
from canal.runtime.services import Services
from canal.runtime.tasks.errors import TASK_ALREADY_ENDED, TASK_LIMIT_REACHED, TASK_NOT_FOUND, TaskError
from canal.runtime.tasks.models import REASON_STATE, TaskRecord, now_iso
from canal.runtime.tasks.output import TaskLog
from canal.runtime.tasks.store import TaskStore, owner_project
from canal.sandbox.docker.background import BackgroundBackend, TaskEnd, TaskSpec

log = logging.getLogger("canal.tasks")
END_WAIT_S = 15.0  # how long a cancel waits for the task's tree to be gone


@dataclass
class Running:
    """One task while it runs (implements ``TaskSink``)."""

    manager: TaskManager
    record: TaskRecord
    log: TaskLog
    n: int
    container: str
    why: str | None = None  # our reason, when we end it (cancel, canal down, server stop)
    done: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    forwards: list[Forwarder] = field(default_factory=list)

    def output(self, stream: str, data: bytes) -> None:
        self.log.write(stream, data)

    def ended(self, end: TaskEnd) -> None:
        self.manager.record_end(self, end)

    def live(self) -> TaskRecord:
        """The record with what is known now (duration so far, bytes so far)."""
        return self.record.model_copy(update={"duration_s": round(time.monotonic() - self.started, 3),
                                              "output_bytes": self.log.size})


class TaskManager:
    def __init__(self, project_dir: Path, backend: BackgroundBackend,
                 services: Services | None = None) -> None:
        self.project_dir = project_dir
        self.backend = backend
        self.services = services or Services(project_dir)
        self.store = TaskStore(self.services.state_dir / "tasks")
        self._lock = threading.Lock()
        self._audit_lock = threading.Lock()
        self._running: dict[str, Running] = {}
        self._starting: dict[str, int] = {}  # sandbox -> starts in progress (they count against the limit)
        self._numbers = itertools.count(1)
        self._recover()

    # starting ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def slot(self, sandbox: str, limit: int) -> Iterator[None]:
        """Hold one of ``limit`` task places of ``sandbox`` while a start is decided and launched."""
        with self._lock:
            busy = sum(1 for r in self._running.values() if r.record.sandbox == sandbox)
            busy += self._starting.get(sandbox, 0)
            if busy >= limit:
                ids = ", ".join(r.record.id for r in self._running.values() if r.record.sandbox == sandbox)
                msg = (f"Sandbox {sandbox} already runs {busy} background task(s) ({ids}), the most "
                       f"canal.yaml's tasks.max_running allows ({limit}). Nothing was started.")
                raise TASK_LIMIT_REACHED(msg, hint="wait for one to end, or cancel one",
                                next=[act("task.list"), act("task.cancel", task="ID")],
                                details={"sandbox": sandbox, "limit": limit})
            self._starting[sandbox] = self._starting.get(sandbox, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._starting[sandbox] -= 1

    def launch(self, record: TaskRecord, log_file: TaskLog, container: str, spec: TaskSpec,
               expect_state: str | None, forwards: list[Forwarder]) -> TaskRecord:
        """Start an admitted task (its intent is on record); ``TASK_START_FAILED`` records it as not run."""
        running = Running(self, record, log_file, next(self._numbers), container)
        with self._lock:
            self._running[record.id] = running
        self.store.save(record)
        try:
            self.backend.start_task(container, running.n, spec, running, expect_state=expect_state)
        except BaseException as exc:
            with self._lock:
                self._running.pop(record.id, None)
            log_file.close()
            log_file.path.unlink(missing_ok=True)
            self.store.path(record.id).unlink(missing_ok=True)
            self._audit_end(record, exit_code=None, reason="killed", size=0, digest="",
                            ending="not_started", detail=str(getattr(exc, "message", exc)))
            raise
        with self._lock:
            if not running.done.is_set():
                running.forwards = forwards
                forwards = []
        for forward in forwards:  # it ended already: its forwards close at once
            forward.close("the task ended")
        return record

    # ending ------------------------------------------------------------------------------------
    def record_end(self, running: Running, end: TaskEnd) -> None:
        """Called once per task when it ended, on the background channel's reader thread."""
        running.log.close()
        own = ("exited", "hard_timeout", "killed")  # how it ended by itself; else ours to name
        reason = end.reason if end.reason in own else running.why or end.reason
        reason = reason if reason in REASON_STATE else "lost"
        code = end.exit_code if reason == "exited" else (ExitCode.TIMEOUT if reason == "hard_timeout"
                                                           else ExitCode.KILLED)
        notes = [end.detail] if end.detail and reason in ("exited", "lost", "killed") else []
        if end.left and reason == "exited":
            notes.append(f"{end.left} process(es) the task left running were killed when it ended")
        if end.dropped_bytes:
            notes.append(f"{end.dropped_bytes} bytes of output past the cap of {running.record.output_cap} "
                         "were not kept")
        if end.survivors:
            notes.append(f"processes survived the kill: {list(end.survivors)}")
        record = running.record.model_copy(update={
            "state": REASON_STATE[reason], "exit_code": code, "reason": reason, "detail": "; ".join(notes),
            "ended_at": now_iso(), "duration_s": round(time.monotonic() - running.started, 3),
            "output_bytes": running.log.size, "dropped_bytes": end.dropped_bytes,
            "marks": list(running.log.marks)})
        try:
            audit_id = self._audit_end(record, exit_code=code, reason=_run_reason(reason), ending=reason,
                                       size=running.log.received, digest=running.log.sha.hexdigest())
            record = record.model_copy(update={"audit_ended": audit_id})
            self.store.save(record)
        except Exception:  # the end must still be known in memory and wake its waiters
            log.exception("recording the end of task %s failed", record.id)
        with self._lock:
            running.record = record
            self._running.pop(record.id, None)
            forwards, running.forwards = running.forwards, []
        running.done.set()
        for forward in forwards:  # not on this (the channel's reader) thread: closing waits for connections
            threading.Thread(target=forward.close, args=("the task ended",), daemon=True).start()

    def _audit_end(self, record: TaskRecord, *, exit_code: int | None, reason: str, size: int, digest: str,
                   ending: str, detail: str = "") -> str:
        extra: dict[str, Any] = {"task": record.id, "ending": ending}
        if detail:
            extra["detail"] = detail
        duration = int((record.duration_s or 0) * 1000)
        with self._audit_lock:
            return self.services.audit.append(RunCompleted.event, RunCompleted(
                started=record.audit_started, sandbox=record.sandbox, exit_code=exit_code, reason=reason,
                duration_ms=duration, output_bytes=size, output_sha256=digest, extra=extra).data(),
                actor=record.actor)

    def cancel(self, task_id: str, why: str = "cancelled") -> TaskRecord:
        """Kill the task's whole tree and wait for its end to be recorded."""
        with self._lock:
            running = self._running.get(task_id)
        if running is None:
            record = self.get(task_id)
            msg = (f"Task {task_id} has already ended ({record.state}"
                   f"{', exit ' + str(record.exit_code) if record.exit_code is not None else ''}): "
                   "there is nothing to cancel.")
            raise TASK_ALREADY_ENDED(msg, hint="see its output", next=act("task.show", task=task_id),
                            details={"task": task_id, "state": record.state})
        self._end(running, why)
        return running.record

    def _end(self, running: Running, why: str) -> None:
        if running.why is None:
            running.why = why
        if not self.backend.cancel_task(running.container, running.n, why):
            running.done.wait(2.0)  # it was ending anyway
        if not running.done.wait(END_WAIT_S):
            log.warning("task %s did not report its end within %.0f s", running.record.id, END_WAIT_S)

    def end_sandbox(self, sandbox: str, why: str = "sandbox_down") -> list[TaskRecord]:
        """End every running task of ``sandbox`` (``canal down``); returns their final records."""
        with self._lock:
            ending = [r for r in self._running.values() if r.record.sandbox == sandbox]
        return self._end_all(ending, why)

    def _end_all(self, ending: list[Running], why: str) -> list[TaskRecord]:
        threads = [threading.Thread(target=self._end, args=(r, why), daemon=True) for r in ending]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(END_WAIT_S + 5)
        return [r.record for r in ending]

    def close(self, why: str = "server_stopped") -> list[TaskRecord]:
        with self._lock:
            ending = list(self._running.values())
        return self._end_all(ending, why)

    def busy(self) -> bool:
        with self._lock:
            return bool(self._running)

    # reading -----------------------------------------------------------------------------------
    def running(self, task_id: str) -> Running | None:
        with self._lock:
            return self._running.get(task_id)

    def get(self, task_id: str) -> TaskRecord:
        found = self.running(task_id)
        if found is not None:
            return found.live()
        record = self.store.load(task_id)
        if record is None or record.project != str(self.project_dir):
            raise self._not_found(task_id, record)
        return record

    def list(self, sandbox: str | None = None) -> list[TaskRecord]:
        with self._lock:
            live = {r.record.id: r for r in self._running.values()}
        mine = [r for r in self.store.all() if r.project == str(self.project_dir)]
        records = [live[r.id].live() if r.id in live else r for r in mine]
        return [r for r in records if sandbox is None or r.sandbox == sandbox]

    def _not_found(self, task_id: str, foreign: TaskRecord | None = None) -> TaskError:
        other = foreign.project if foreign is not None else owner_project(
            [d for d in self.services.project_state_dirs() if d != self.services.state_dir], task_id)
        if other is not None:
            msg = f"Task {task_id} belongs to another project ({other}), not to {self.project_dir}."
            return TASK_NOT_FOUND(msg, hint=f"ask about it in its own project (from the folder {other})",
                                details={"task": task_id, "project": str(other)})
        msg = f"No task {task_id} in project {self.project_dir}."
        return TASK_NOT_FOUND(msg, hint="see this project's tasks", next=act("task.list"),
                            details={"task": task_id})

    def _recover(self) -> None:
        """Records left running by a Canal process that is gone: that process's tasks ended with it."""
        for record in self.store.all():
            if record.project == str(self.project_dir) and record.running and not alive(record.runner):
                ended = record.model_copy(update={"state": "killed", "reason": "server_stopped",
                                                  "exit_code": ExitCode.KILLED,
                                                  "detail": "the Canal process that ran it stopped"})
                self.store.save(ended)


def _run_reason(reason: str) -> str:
    """The ``run.completed`` reason (an ``EndReason`` value) of a task's ending."""
    return {"exited": "exited", "hard_timeout": "hard_timeout"}.get(reason, "killed")
