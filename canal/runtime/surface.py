"""The public API of one project's Canal, as Protocols: what ``Canal`` and ``Canal.connect()`` both offer.

``Canal`` implements them in-process (mypy checks it: ``runtime/api.py``); the remote client is made
from them (``runtime/remote.py``), and the server serves exactly the calls they name, their arguments
checked against the same signatures (``canal.server.api_ops``). So a method added here is served and
reachable through the server with no hand-kept argument list, and one missing from either side fails
``tests/unit/runtime/test_surface.py``.

What crosses is data: every argument and result is a JSON-able type or a model. Callbacks, open files
and host paths stay in-process only (``Canal.run(stdin=<file>)``, ``say``, ``on_build``), and so do the
flags only a front end that verified a person may set (``person``, ``reveal``) and the methods of the
sub-APIs that act for such a person (``approvals.decide``, ``settings.approve``, ``keys.rotate``,
``audit.record``...: ``runtime/admin/``): they are not in these Protocols, so no caller of the server can
pass or call them. The records sub-APIs (``audit``, ``approvals``, ``settings``, ``keys``, ``state``) offer
here only what reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, runtime_checkable

from canal.host.approvals import ApprovalsSettings, Pending
from canal.host.audit.verify import VerifyReport
from canal.host.checkpoints import Change, Checkpoint, DiffResult, History, HistoryRow, UndoResult
from canal.host.files import EditResult, ViewResult, WriteResult
from canal.host.forks import ApplyResult, Fork, ForkChanges
from canal.host.trash import RemoveOutcome, RestoreResult, TrashEntry
from canal.presenter import PresenterConfig
from canal.runtime.admin.audit import AuditExport, AuditRecords, AuditSearch
from canal.runtime.admin.keys import KeyList
from canal.runtime.admin.state import StateDoc, StateReport
from canal.runtime.run.result import RunResult
from canal.runtime.sandboxes.egress import EgressLog
from canal.runtime.sandboxes.images import ImageReport
from canal.runtime.tasks import LogPiece, TaskRecord, TaskStart, TaskView
from canal.runtime.trust import TrustStatus
from canal.sandbox.backend import SandboxInfo
from canal.sandbox.images import BuiltImage, PrunedImage
from canal.workflows.tools.meta import ToolMeta
from canal.workflows.tools.model import ToolDefinition
from canal.workflows.views import AdvanceView, CurrentView, RunSummary, StartView, WorkflowSummary

# the types the public API's results hold, which the front ends render: here, so they never import the
# stores that define them
__all__ = [
    "SUB_APIS", "ApprovalsAPI", "AuditAPI", "CanalAPI", "Change", "Checkpoint", "DownReport", "FilesAPI",
    "HistoryRow", "KeysAPI", "RemoveOutcome", "SettingsAPI", "StateAPI", "TasksAPI", "ToolsAPI", "UndoResult",
    "WorkflowsAPI",
]


@dataclass(frozen=True)
class DownReport:
    removed: bool  # False when there was no sandbox
    tasks: list[TaskRecord]  # background tasks it ended


@runtime_checkable
class FilesAPI(Protocol):
    """Reversible file operations on the workspace (docs/files.md): a path is relative to its root."""

    def view(self, path: str = ".", *, start: int | None = None, end: int | None = None) -> ViewResult: ...

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False,
             expect_sha256: str | None = None) -> EditResult: ...

    def write(self, path: str, data: bytes) -> WriteResult: ...

    def remove(self, paths: Sequence[str], *, recursive: bool = False) -> list[RemoveOutcome]: ...

    def restore(self, entry_id: str, *, force: bool = False) -> RestoreResult: ...

    def trashed(self) -> list[TrashEntry]: ...

    def purge(self, older_than: timedelta) -> list[TrashEntry]: ...


@runtime_checkable
class ToolsAPI(Protocol):
    """The project's tools (docs/tools.md)."""

    def list(self) -> list[ToolDefinition]: ...

    def get(self, name: str) -> ToolDefinition: ...

    def meta(self, name: str, *, required_only: bool = False) -> ToolMeta: ...

    def call(self, name: str, args: Mapping[str, Any], *, confirm: str | None = None,
             env: Mapping[str, str] | None = None, timeout_s: float | None = None,
             unattended: bool | None = None, secrets: Sequence[str] = ()) -> RunResult: ...


@runtime_checkable
class TasksAPI(Protocol):
    """Background tasks (docs/tasks.md); they live in the server, so they outlive the caller."""

    def start(self, command: str, *, name: str | None = None, timeout_s: float | None = None,
              sandbox: str | None = None, confirm: str | None = None, unattended: bool | None = None,
              forward: Sequence[str] = ()) -> TaskStart: ...

    def resolve(self, task: str) -> TaskRecord: ...

    def list(self, sandbox: str | None = None) -> list[TaskRecord]: ...

    def show(self, task: str) -> TaskView: ...

    def read(self, task: str, *, offset: int = 0, since_s: float | None = None) -> LogPiece: ...

    def wait(self, task: str, timeout_s: float | None = None) -> TaskRecord: ...

    def cancel(self, task: str) -> TaskRecord: ...


@runtime_checkable
class WorkflowsAPI(Protocol):
    """Gated workflows (docs/workflows.md): the engine owns order and state."""

    def list_workflows(self) -> list[WorkflowSummary]: ...

    def start(self, name: str, *, unattended: bool = False) -> StartView: ...

    def advance(self, run_id: str, gate_data: Mapping[str, Any] | None = None, *,
                confirm: str | None = None, retry: bool = False) -> AdvanceView: ...

    def current(self, run_id: str) -> CurrentView: ...

    def show(self, run_id: str) -> CurrentView: ...

    def abort(self, run_id: str, *, reason: str = "") -> CurrentView: ...

    def runs(self) -> list[RunSummary]: ...


@runtime_checkable
class AuditAPI(Protocol):
    """The project's tamper-evident audit log (docs/audit.md): read, verify, copy off."""

    def show(self, *, since: str = "", event: str = "") -> AuditRecords: ...

    def search(self, *, kind: str = "", text: str = "", limit: int = 300) -> AuditSearch: ...

    def verify(self, *, checkpoint: str | None = None) -> VerifyReport: ...

    def export(self, *, since: str = "", after: str | None = None) -> AuditExport: ...


@runtime_checkable
class ApprovalsAPI(Protocol):
    """Confirmations waiting to be used or decided by a person (docs/approvals.md)."""

    def pending(self) -> list[Pending]: ...

    def show(self, token: str) -> Pending: ...


@runtime_checkable
class SettingsAPI(Protocol):
    """Whether canal.yaml's settings are approved, and who may approve a change (docs/approvals.md)."""

    def status(self) -> TrustStatus: ...

    def approvers(self) -> ApprovalsSettings: ...


@runtime_checkable
class KeysAPI(Protocol):
    """The keys that seal state and sign records: ids and states, never their material."""

    def list(self) -> KeyList: ...


@runtime_checkable
class StateAPI(Protocol):
    """Sealed state files (workflow runs and other host state), their sealed values masked."""

    def show(self, doc_id: str) -> StateDoc: ...

    def verify(self) -> StateReport: ...


@runtime_checkable
class CanalAPI(Protocol):
    """One project's Canal: commands, checkpoints, forks, sandboxes, and the sub-APIs."""

    def run(self, command: str, *, sandbox: str | None = None, timeout_s: float | None = None,
            idle_timeout_s: float | None = None, confirm: str | None = None,
            unattended: bool | None = None, presenter: PresenterConfig | None = None,
            stdin: bytes | None = None) -> RunResult: ...

    def run_argv(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 sandbox: str | None = None, timeout_s: float | None = None, confirm: str | None = None,
                 unattended: bool | None = None, secrets: Sequence[str] = ()) -> RunResult: ...

    def call_tool(self, name: str, args: Mapping[str, Any], *, confirm: str | None = None) -> RunResult: ...

    def checkpoints(self, limit: int | None = None) -> History: ...

    def latest_checkpoint(self) -> Checkpoint | None: ...

    def diff(self, checkpoint: str | None = None) -> DiffResult: ...

    def undo(self, checkpoint: str | None = None, *, last_command: bool = False) -> UndoResult: ...

    def prune_checkpoints(self, *, before: str | None = None) -> list[str]: ...

    def fork(self, name: str, *, from_checkpoint: str | None = None) -> Fork: ...

    def forks(self) -> list[Fork]: ...

    def changes(self, name: str) -> ForkChanges: ...

    def apply(self, name: str, paths: Sequence[str] = (), *, confirm: str | None = None) -> ApplyResult: ...

    def discard(self, name: str) -> Fork: ...

    def build_images(self, *, egress: bool = False, force: bool = False) -> list[BuiltImage]: ...

    def build_project_image(self) -> BuiltImage | None: ...

    def image_report(self) -> ImageReport: ...

    def up(self, name: str | None = None) -> SandboxInfo: ...

    def down(self, name: str | None = None) -> bool: ...

    def down_report(self, name: str | None = None) -> DownReport: ...

    def ps(self) -> list[dict[str, Any]]: ...

    def gc(self, *, all_projects: bool = False) -> list[str]: ...

    def gc_images(self) -> list[PrunedImage]: ...

    def egress_log(self, *, since: str = "", denied_only: bool = False, sandbox: str | None = None,
                   limit: int | None = None) -> EgressLog: ...

    def close(self) -> None: ...

    @property
    def files(self) -> FilesAPI: ...

    @property
    def tools(self) -> ToolsAPI: ...

    @property
    def tasks(self) -> TasksAPI: ...

    @property
    def workflows(self) -> WorkflowsAPI: ...

    @property
    def audit(self) -> AuditAPI: ...

    @property
    def approvals(self) -> ApprovalsAPI: ...

    @property
    def settings(self) -> SettingsAPI: ...

    @property
    def keys(self) -> KeysAPI: ...

    @property
    def state(self) -> StateAPI: ...


SUB_APIS: dict[str, type[Any]] = {"files": FilesAPI, "tools": ToolsAPI, "tasks": TasksAPI,
                                  "workflows": WorkflowsAPI, "audit": AuditAPI, "approvals": ApprovalsAPI,
                                  "settings": SettingsAPI, "keys": KeysAPI, "state": StateAPI}
