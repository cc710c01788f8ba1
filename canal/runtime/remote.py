"""The Python API through the per-user server: ``Canal.connect(project)`` returns a ``RemoteCanal``.

Its commands run on the server's warm state, in the same sandbox sessions as ``canal run`` and
``canal mcp``: a ``cd`` or ``export`` done through one door is seen through the others. The server is
started on demand and replaced when its build differs, exactly as for the CLI. Each thread keeps one
connection for its calls (no connect and handshake per call); an error comes back as the same
``CanalError`` code the in-process API raises.

Its methods are made from the Protocols of ``runtime.surface``, one per operation of ``runtime.calls``:
every method and sub-API of the public API is here by construction, with ``Canal``'s own signature.
"""

from __future__ import annotations

import inspect
import os
import socket
import threading
import weakref
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


RESENDS = 3  # a request the server refused unserved (``bye``: it was stopping) goes to the next one


class _Connection:
    """Who the calls are for, and each thread's kept connection to the server. A call goes on the
    thread's connection (made on first use; made again when the server closed it, or said ``bye`` to
    the request, which it then did not run); a forked child makes its own. One object may serve many
    threads."""

    def __init__(self, project_dir: Path, sandbox: str, actor: str) -> None:
        self.project_dir, self.sandbox, self.actor = project_dir, sandbox, actor
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: dict[wire.Socket, threading.Thread] = {}  # every kept connection, by its thread
        weakref.finalize(self, _close_all, self._open, self._lock)  # dropped without close(): no leak

    def __call__(self, call: str, args: dict[str, Any]) -> Any:
        request = {"op": "api", "keep": True, "call": call, "project": str(self.project_dir),
                   "sandbox": self.sandbox, "actor": self.actor, "args": args, "cwd": os.getcwd()}
        for _attempt in range(RESENDS):
            sock = self._socket()
            try:
                wire.send_json(sock, wire.REQUEST, request)
            except OSError:  # closed before it could read the request: nothing ran
                self._forget(sock)
                continue
            try:
                answer = wire.recv_json(sock, wire.DATA)
                if "bye" not in answer:
                    wire.recv_json(sock, wire.EXIT)
            except BaseException:  # gone mid-call (or interrupted): this connection is not used again
                self._forget(sock)
                raise
            if "bye" in answer:
                self._forget(sock)
                continue
            if "error" in answer:
                raise remote_error(answer["error"])
            return answer["result"]
        msg = f"the Canal server closed the connection {RESENDS} times before reading the request"
        raise wire.WireError(msg)

    def _socket(self) -> wire.Socket:
        sock: wire.Socket | None = getattr(self._local, "sock", None)
        if sock is not None and (self._local.pid != os.getpid() or not _still_open(sock)):
            self._forget(sock)  # a parent's connection, one closed here, or one the server ended
            sock = None
        if sock is None:
            sock = connect_or_start(server_paths(), build_id())
            self._local.sock, self._local.pid = sock, os.getpid()
            with self._lock:
                ended = [held for held, thread in self._open.items() if not thread.is_alive()]
                self._open[sock] = threading.current_thread()
            for held in ended:  # threads that made a connection and are gone: theirs is not used again
                self._forget(held)
        return sock

    def _forget(self, sock: wire.Socket) -> None:
        if getattr(self._local, "sock", None) is sock:
            self._local.sock = None
        with self._lock:
            self._open.pop(sock, None)
        sock.close()  # never shutdown: a forked parent's connection stays the parent's

    def close(self) -> None:
        _close_all(self._open, self._lock)


def _close_all(open_socks: dict[wire.Socket, threading.Thread], lock: threading.Lock) -> None:
    with lock:
        held = list(open_socks)
        open_socks.clear()
    for sock in held:
        sock.close()


def _still_open(sock: wire.Socket) -> bool:
    """False when the connection was closed here, or the server sent something while no call was
    waiting for it (``bye``, end of file): it is not used for another request."""
    if sock.fileno() < 0:
        return False
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def _init(self: _Remote, project_dir: str | Path | None = None, *, sandbox: str = "default",
          actor: str = "agent") -> None:
    start = Path(project_dir) if project_dir is not None else None
    found = find_project_dir(start) if start is None else start.resolve()
    _Remote.__init__(self, _Connection(found, sandbox, actor))
    self.project_dir, self.sandbox, self.actor = found, sandbox, actor  # type: ignore[attr-defined]


def _close(self: _Remote) -> None:
    """Close the connections kept for this object's calls (a call after this makes a new one)."""
    caller = self._caller
    if isinstance(caller, _Connection):
        caller.close()


def _enter(self: _Remote) -> _Remote:
    return self


def _exit(self: _Remote, exc_type: type[BaseException] | None, exc: BaseException | None,
          tb: TracebackType | None) -> None:
    _close(self)


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
