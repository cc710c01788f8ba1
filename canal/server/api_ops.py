"""The Python API's calls, served: ``RemoteCanal`` (``canal.runtime.remote``) sends them, the server runs them
on its warm ``Canal`` objects, so a program using the API shares each sandbox's session with the CLI and
MCP. Each request is one call: ``{"op": "api", "call": "run", "project": ..., "args": {...}}``; the answer
is a ``D`` frame with ``{"result": ...}`` or ``{"error": <error JSON>}``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canal.client import wire
from canal.core.errors import CanalError
from canal.runtime.errors import error_json
from canal.runtime.run.interrupt import interruptible
from canal.server.conn import Connection

if TYPE_CHECKING:
    from canal.runtime.api import Canal

log = logging.getLogger("canal.server")
RUN_ARGS = frozenset({"timeout_s", "idle_timeout_s", "confirm", "unattended", "stdin"})
ARGV_ARGS = frozenset({"timeout_s", "confirm", "unattended"})


def handle_api(conn: Connection, request: dict[str, Any]) -> int:
    try:
        with interruptible(conn.interrupt):
            answer = {"result": _call(request)}
    except CanalError as exc:
        # the hint as prose and the next actions as data: the remote caller words them itself
        answer = {"error": {**error_json(exc), "hint": exc.hint, "exit_code": exc.exit_code}}
    except Exception as exc:
        log.exception("API call %s failed", request.get("call"))
        answer = {"error": {"status": "error", "code": "INTERNAL_ERROR", "message": str(exc), "hint": "",
                            "details": {}}}
    conn.send_json(wire.DATA, answer)
    return 0


def _call(request: dict[str, Any]) -> Any:
    from canal.runtime.api import Canal

    call = str(request.get("call"))
    args = dict(request.get("args") or {})
    with Canal(Path(str(request["project"])), sandbox=str(request.get("sandbox") or "default"),
               actor=str(request.get("actor") or "agent")) as canal:
        if call == "run":
            kwargs = {k: v for k, v in args.items() if k in RUN_ARGS}
            if isinstance(kwargs.get("stdin"), str):
                kwargs["stdin"] = kwargs["stdin"].encode("utf-8", "surrogateescape")
            result = canal.run(str(args["command"]), **kwargs)
            return {**result.to_json(), "text": result.text}
        if call == "run_argv":
            kwargs = {k: v for k, v in args.items() if k in ARGV_ARGS}
            result = canal.run_argv([str(a) for a in args["argv"]], env=args.get("env"), **kwargs)
            return {**result.to_json(), "text": result.text}
        if call == "up":
            info = canal.up()
            return {"name": info.name, "id": info.id, "status": info.status.value}
        if call == "down":
            return {"removed": canal.down()}
        if call.startswith("task_"):
            return _task_call(canal, call, args)
    msg = f"unknown API call {call!r}"
    raise ValueError(msg)


def _task_call(canal: Canal, call: str, args: dict[str, Any]) -> Any:
    tasks = canal.tasks
    if call == "task_start":
        forward = [str(f) for f in args.get("forward") or []]
        started = tasks.start(str(args["command"]), name=args.get("name"), timeout_s=args.get("timeout_s"),
                              confirm=args.get("confirm"), forward=forward)
        return started.to_json()
    if call == "task_list":
        return [r.to_json() for r in tasks.list()]
    task = str(args.get("task") or "")
    if call == "task_get":
        return tasks.resolve(task).to_json()
    if call == "task_show":
        return tasks.show(task).to_json()
    if call == "task_read":
        piece = tasks.read(task, offset=int(args.get("offset") or 0), since_s=args.get("since_s"))
        return {"text": piece.text, "offset": piece.offset, "next_offset": piece.next_offset,
                "running": piece.running}
    if call == "task_wait":
        return tasks.wait(task, args.get("timeout_s")).to_json()
    if call == "task_cancel":
        return tasks.cancel(task).to_json()
    msg = f"unknown API call {call!r}"
    raise ValueError(msg)
