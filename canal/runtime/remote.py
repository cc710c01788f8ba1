"""The Python API through the per-user server: ``Canal.connect(project)`` returns a ``RemoteCanal``.

Its commands run on the server's warm state, in the same sandbox sessions as ``canal run`` and
``canal mcp``: a ``cd`` or ``export`` done through one door is seen through the others. The server is
started on demand and replaced when its build differs, exactly as for the CLI. Each call is one short
connection; an error comes back as the same ``CanalError`` code the in-process API raises.

Its methods are made from the Protocols of ``runtime.surface``, one per operation of ``runtime.calls``:
every method and sub-API of the public API is here by construction, with ``Canal``'s own signature.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from canal.client import wire
from canal.client.lifecycle import connect_or_start
from canal.client.paths import build_id, server_paths
from canal.core.errors import CanalError
from canal.core.next import NextAction
from canal.runtime.calls import Operation, operations
from canal.runtime.settings.project import find_project_dir
from canal.runtime.surface import SUB_APIS, CanalAPI


def remote_error(data: Mapping[str, Any]) -> CanalError:
    """The server's error JSON as a ``CanalError`` carrying the same code and exit code."""
    actions = [NextAction(a["kind"], dict(a.get("args") or {}), str(a.get("note") or ""))
               for a in data.get("next") or []]
    error = CanalError(str(data.get("message") or ""), hint=str(data.get("hint") or ""), next=actions,
                       details=dict(data.get("details") or {}))
    error.code, error.exit_code = str(data.get("code") or "CANAL_ERROR"), int(data.get("exit_code") or 125)
    return error


Caller = Callable[[str, dict[str, Any]], Any]


class _Remote:
    """Base of the made classes: each method sends its operation through ``caller``."""

    def __init__(self, caller: Caller) -> None:
        self._caller = caller


def _method(op: Operation) -> Callable[..., Any]:
    def call(self: _Remote, *args: Any, **kwargs: Any) -> Any:
        bound = op.signature.bind(*args, **kwargs)  # a wrong argument fails here, as it would in-process
        return op.load_result(self._caller(op.name, op.dump_args(bound.arguments)))

    call.__name__ = call.__qualname__ = op.method
    call.__doc__ = f"``{op.name}`` through the server."
    call.__signature__ = op.signature.replace(  # type: ignore[attr-defined]
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                    *op.signature.parameters.values()])
    return call


def _remote_class(name: str, api: str | None, extra: dict[str, Any]) -> type[_Remote]:
    methods = {op.method: _method(op) for op in operations().values() if op.api == api}
    doc = f"``{api or 'Canal'}`` through the server."
    return type(name, (_Remote,), {**methods, **extra, "__doc__": doc})


def _sub_api(api: str) -> property:
    return property(lambda self: remote_classes()[api](self._caller), doc=f"``Canal.{api}`` via the server.")


class _Connection:
    """Who the calls are for; each call is its own connection, so one object may serve many threads."""

    def __init__(self, project_dir: Path, sandbox: str, actor: str) -> None:
        self.project_dir, self.sandbox, self.actor = project_dir, sandbox, actor

    def __call__(self, call: str, args: dict[str, Any]) -> Any:
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


def _init(self: _Remote, project_dir: str | Path | None = None, *, sandbox: str = "default",
          actor: str = "agent") -> None:
    start = Path(project_dir) if project_dir is not None else None
    found = find_project_dir(start) if start is None else start.resolve()
    _Remote.__init__(self, _Connection(found, sandbox, actor))
    self.project_dir, self.sandbox, self.actor = found, sandbox, actor  # type: ignore[attr-defined]


def _close(self: _Remote) -> None:
    """Nothing is held between calls."""


def _enter(self: _Remote) -> _Remote:
    return self


def _exit(self: _Remote, exc_type: type[BaseException] | None, exc: BaseException | None,
          tb: TracebackType | None) -> None:
    return None


@cache
def remote_classes() -> dict[str | None, type[_Remote]]:
    """``RemoteCanal`` (key None) and its sub-APIs, made on first use: building each call's validators
    costs tens of milliseconds, which ``import canal`` should not pay."""
    made: dict[str | None, type[_Remote]] = {
        api: _remote_class(f"Remote{api.title()}", api, {}) for api in SUB_APIS}
    made[None] = _remote_class("RemoteCanal", None, {
        "__init__": _init, "close": _close, "__enter__": _enter, "__exit__": _exit,
        **{api: _sub_api(api) for api in SUB_APIS}})
    return made


def connect(project_dir: str | Path | None = None, *, sandbox: str = "default",
            actor: str = "agent") -> CanalAPI:
    """``Canal.connect``: the public API of ``CanalAPI``, every call served by the server."""
    made: Callable[..., Any] = remote_classes()[None]  # its methods are made: mypy cannot see them
    return cast("CanalAPI", made(project_dir, sandbox=sandbox, actor=actor))
