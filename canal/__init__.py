"""Canal: agent commands in hardened containers, under a CEL policy, with an audit log.

The public API::

    from canal import Canal

    with Canal("/path/to/project") as canal:
        result = canal.run("pytest -q")
        print(result.text)

``CanalError`` is the root of every error Canal raises (``code``, ``exit_code``, ``message``, ``hint``,
``next``, ``details``; docs/errors.md lists the codes).

Names are imported on first use, so ``import canal`` (and every ``canal.*`` submodule) stays cheap.
"""

from __future__ import annotations

from canal.core.version import __version__ as __version__

# ``typing`` costs every ``canal`` call 3-5 ms of start-up (the thin client imports this package too):
# a constant of this name is what mypy reads as typing.TYPE_CHECKING
TYPE_CHECKING = False

# Everything a user of the Python API touches, by the module that defines it (imported on first use).
_EXPORTS = {
    **dict.fromkeys(("Canal",), "canal.runtime.api"),
    **dict.fromkeys(("CanalAPI", "FilesAPI", "ToolsAPI", "TasksAPI", "WorkflowsAPI", "AuditAPI",
                     "ApprovalsAPI", "SettingsAPI", "KeysAPI", "StateAPI", "DownReport"),
                    "canal.runtime.surface"),
    **dict.fromkeys(("Resources", "Owned", "Shared"), "canal.runtime.sandboxes.resources"),
    **dict.fromkeys(("AuditEntry", "AuditRecords", "AuditSearch", "AuditExport"),
                    "canal.runtime.admin.audit"),
    **dict.fromkeys(("KeyList", "KeyRotation"), "canal.runtime.admin.keys"),
    **dict.fromkeys(("StateDoc", "StateReport"), "canal.runtime.admin.state"),
    **dict.fromkeys(("TrustStatus",), "canal.runtime.trust"),
    **dict.fromkeys(("VerifyReport",), "canal.host.audit"),
    **dict.fromkeys(("Pending", "Approver"), "canal.host.approvals"),
    **dict.fromkeys(("Proof",), "canal.host.approvals.decide"),
    **dict.fromkeys(("KeyInfo",), "canal.host.keys"),
    **dict.fromkeys(("RunResult",), "canal.runtime.run.result"),
    **dict.fromkeys(("CanalError", "ConfirmationRequired", "ErrorCode", "ExitCode"), "canal.core.errors"),
    **dict.fromkeys(("ConfigError",), "canal.runtime.errors"),
    **dict.fromkeys(("SandboxError",), "canal.sandbox.errors"),
    **dict.fromkeys(("SandboxInfo",), "canal.sandbox.backend"),
    **dict.fromkeys(("CanalConfig",), "canal.runtime.settings.config"),
    **dict.fromkeys(("PresenterConfig",), "canal.presenter"),
    **dict.fromkeys(("History", "DiffResult", "UndoResult"), "canal.host.checkpoints"),
    **dict.fromkeys(("Fork", "ForkChanges", "ApplyResult"), "canal.host.forks"),
    **dict.fromkeys(("EditResult", "WriteResult", "ViewResult"), "canal.host.files"),
    **dict.fromkeys(("TaskRecord", "TaskStart", "TaskView", "LogPiece"), "canal.runtime.tasks"),
}
__all__ = [
    "ApplyResult", "ApprovalsAPI", "Approver", "AuditAPI", "AuditEntry", "AuditExport", "AuditRecords",
    "AuditSearch", "Canal", "CanalAPI", "CanalConfig", "CanalError", "ConfigError", "ConfirmationRequired",
    "DiffResult", "DownReport", "EditResult", "ErrorCode", "ExitCode", "FilesAPI", "Fork", "ForkChanges",
    "History", "KeyInfo", "KeyList", "KeyRotation", "KeysAPI", "LogPiece", "Owned", "Pending",
    "PresenterConfig", "Proof", "Resources", "RunResult", "SandboxError", "SandboxInfo", "SettingsAPI",
    "Shared", "StateAPI", "StateDoc", "StateReport", "TaskRecord", "TaskStart", "TaskView", "TasksAPI",
    "ToolsAPI", "TrustStatus", "UndoResult", "VerifyReport", "ViewResult", "WorkflowsAPI", "WriteResult",
]

if TYPE_CHECKING:
    from typing import Any

    from canal.core.errors import CanalError, ConfirmationRequired, ErrorCode, ExitCode
    from canal.host.approvals import Approver, Pending
    from canal.host.approvals.decide import Proof
    from canal.host.audit import VerifyReport
    from canal.host.checkpoints import DiffResult, History, UndoResult
    from canal.host.files import EditResult, ViewResult, WriteResult
    from canal.host.forks import ApplyResult, Fork, ForkChanges
    from canal.host.keys import KeyInfo
    from canal.presenter import PresenterConfig
    from canal.runtime.admin.audit import AuditEntry, AuditExport, AuditRecords, AuditSearch
    from canal.runtime.admin.keys import KeyList, KeyRotation
    from canal.runtime.admin.state import StateDoc, StateReport
    from canal.runtime.api import Canal
    from canal.runtime.errors import ConfigError
    from canal.runtime.run.result import RunResult
    from canal.runtime.sandboxes.resources import Owned, Resources, Shared
    from canal.runtime.settings.config import CanalConfig
    from canal.runtime.surface import (
        ApprovalsAPI,
        AuditAPI,
        CanalAPI,
        DownReport,
        FilesAPI,
        KeysAPI,
        SettingsAPI,
        StateAPI,
        TasksAPI,
        ToolsAPI,
        WorkflowsAPI,
    )
    from canal.runtime.tasks import LogPiece, TaskRecord, TaskStart, TaskView
    from canal.runtime.trust import TrustStatus
    from canal.sandbox.backend import SandboxInfo
    from canal.sandbox.errors import SandboxError


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'canal' has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module

    return getattr(import_module(module), name)
