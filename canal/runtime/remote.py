"""The Python API through the per-user server: ``Canal.connect(project)`` returns a ``RemoteCanal``.

Its commands run on the server's warm state, in the same sandbox sessions as ``canal run`` and
``canal mcp``: a ``cd`` or ``export`` done through one door is seen through the others. The server is
started on demand and replaced when its build differs, exactly as for the CLI. Each call is one short
connection; an error comes back as the same ``CanalError`` code the in-process API raises.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from canal.client import wire
from canal.client.lifecycle import connect_or_start
from canal.client.paths import build_id, server_paths
from canal.core.errors import CanalError
from canal.core.next import NextAction
from canal.runtime.run.result import RunResult
from canal.runtime.settings.project import find_project_dir
from canal.runtime.tasks import LogPiece, TaskRecord

_CLASSES: dict[tuple[str, int], type[CanalError]] = {}


def remote_error(data: Mapping[str, Any]) -> CanalError:
    """The server's error JSON as a ``CanalError`` carrying the same code and exit code."""
    code, exit_code = str(data.get("code") or "CANAL_ERROR"), int(data.get("exit_code") or 125)
    cls = _CLASSES.get((code, exit_code))
    if cls is None:
        cls = _CLASSES[(code, exit_code)] = type(f"Remote_{code}", (CanalError,),
                                                 {"code": code, "exit_code": exit_code})
    actions = [NextAction(a["kind"], dict(a.get("args") or {}), str(a.get("note") or ""))
               for a in data.get("next") or []]
    return cls(str(data.get("message") or ""), hint=str(data.get("hint") or ""), next=actions,
               details=dict(data.get("details") or {}))


class RemoteCanal:
    """Canal for one project, through the server. Thread-safe: each call is its own connection."""

    def __init__(self, project_dir: str | Path | None = None, *, sandbox: str = "default",
                 actor: str = "agent") -> None:
        start = Path(project_dir) if project_dir is not None else None
        self.project_dir = find_project_dir(start) if start is None else start.resolve()
        self.sandbox = sandbox
        self.actor = actor

    def _call(self, call: str, **args: Any) -> Any:
        sock = connect_or_start(server_paths(), build_id())
        try:
            wire.send_json(sock, wire.REQUEST, {"op": "api", "call": call, "project": str(self.project_dir),
                                                "sandbox": self.sandbox, "actor": self.actor, "args": args,
                                                "cwd": os.getcwd()})
            answer = wire.recv_json(sock, wire.DATA)
        finally:
            sock.close()
        if "error" in answer:
            raise remote_error(answer["error"])
        return answer["result"]

    def run(self, command: str, *, timeout_s: float | None = None, idle_timeout_s: float | None = None,
            confirm: str | None = None, unattended: bool | None = None,
            stdin: bytes | None = None) -> RunResult:
        """As ``Canal.run``, in the server's session of this sandbox."""
        data = self._call("run", command=command, timeout_s=timeout_s, idle_timeout_s=idle_timeout_s,
                          confirm=confirm, unattended=unattended,
                          stdin=None if stdin is None else stdin.decode("utf-8", "surrogateescape"))
        return _result(data)

    def run_argv(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 timeout_s: float | None = None, confirm: str | None = None,
                 unattended: bool | None = None) -> RunResult:
        data = self._call("run_argv", argv=list(argv), env=dict(env or {}), timeout_s=timeout_s,
                          confirm=confirm, unattended=unattended)
        return _result(data)

    def up(self) -> dict[str, Any]:
        info: dict[str, Any] = self._call("up")
        return info

    def down(self) -> bool:
        return bool(self._call("down")["removed"])

    @property
    def tasks(self) -> RemoteTasks:
        """Background tasks in the server (they outlive this object), as ``Canal.tasks``."""
        return RemoteTasks(self)

    def close(self) -> None:
        return None  # nothing held between calls

    def __enter__(self) -> RemoteCanal:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _result(data: dict[str, Any]) -> RunResult:
    text = str(data.pop("text", ""))
    return RunResult.model_validate({**data, "text": text})


class RemoteTasks:
    """``Canal.tasks`` through the server: each call one connection."""

    def __init__(self, canal: RemoteCanal) -> None:
        self._canal = canal

    def start(self, command: str, *, name: str | None = None, timeout_s: float | None = None,
              confirm: str | None = None, forward: Sequence[str] = ()) -> dict[str, Any]:
        """``{"status": "started", "task": {...}}``, or the refusal (confirmation_required, denied)."""
        data: dict[str, Any] = self._canal._call("task_start", command=command, name=name,
                                                 timeout_s=timeout_s, confirm=confirm, forward=list(forward))
        return data

    def list(self) -> list[TaskRecord]:
        return [_record(r) for r in self._canal._call("task_list")]

    def get(self, task: str) -> TaskRecord:
        return _record(self._canal._call("task_get", task=task))

    def show(self, task: str) -> dict[str, Any]:
        data: dict[str, Any] = self._canal._call("task_show", task=task)
        return data

    def read(self, task: str, *, offset: int = 0, since_s: float | None = None) -> LogPiece:
        data = self._canal._call("task_read", task=task, offset=offset, since_s=since_s)
        return LogPiece(str(data["text"]), int(data["offset"]), int(data["next_offset"]),
                        bool(data["running"]))

    def wait(self, task: str, timeout_s: float | None = None) -> TaskRecord:
        return _record(self._canal._call("task_wait", task=task, timeout_s=timeout_s))

    def cancel(self, task: str) -> TaskRecord:
        return _record(self._canal._call("task_cancel", task=task))


def _record(data: Mapping[str, Any]) -> TaskRecord:
    return TaskRecord.model_validate({k: v for k, v in data.items() if k != "ending"})
