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

from importlib import import_module
from typing import TYPE_CHECKING, Any

from canal.core.version import __version__ as __version__

# Everything a user of the Python API touches, by the module that defines it (imported on first use).
_EXPORTS = {
    **dict.fromkeys(("Canal",), "canal.runtime.api"),
    **dict.fromkeys(("CanalAPI", "FilesAPI", "ToolsAPI", "TasksAPI", "WorkflowsAPI", "DownReport"),
                    "canal.runtime.surface"),
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
    "ApplyResult", "Canal", "CanalAPI", "CanalConfig", "CanalError", "ConfigError", "ConfirmationRequired",
    "DiffResult", "DownReport", "EditResult", "ErrorCode", "ExitCode", "FilesAPI", "Fork", "ForkChanges",
    "History", "LogPiece", "PresenterConfig", "RunResult", "SandboxError", "SandboxInfo", "TaskRecord",
    "TaskStart", "TaskView", "TasksAPI", "ToolsAPI", "UndoResult", "ViewResult", "WorkflowsAPI",
    "WriteResult",
]

if TYPE_CHECKING:
    from canal.core.errors import CanalError, ConfirmationRequired, ErrorCode, ExitCode
    from canal.host.checkpoints import DiffResult, History, UndoResult
    from canal.host.files import EditResult, ViewResult, WriteResult
    from canal.host.forks import ApplyResult, Fork, ForkChanges
    from canal.presenter import PresenterConfig
    from canal.runtime.api import Canal
    from canal.runtime.errors import ConfigError
    from canal.runtime.run.result import RunResult
    from canal.runtime.settings.config import CanalConfig
    from canal.runtime.surface import CanalAPI, DownReport, FilesAPI, TasksAPI, ToolsAPI, WorkflowsAPI
    from canal.runtime.tasks import LogPiece, TaskRecord, TaskStart, TaskView
    from canal.sandbox.backend import SandboxInfo
    from canal.sandbox.errors import SandboxError


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'canal' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(import_module(module), name)
