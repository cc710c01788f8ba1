"""The Python API's calls, served: ``Canal.connect()`` (``canal.runtime.remote``) sends them, the server runs
them on its warm state, so a program using the API shares each sandbox's session with the CLI and MCP.
Each request is one call: ``{"op": "api", "call": "files.edit", "project": ..., "args": {...}}``, one of
the operations of ``canal.runtime.calls`` (the public API's Protocols), its arguments checked against
the method's signature; the answer is a ``D`` frame with ``{"result": ...}`` or ``{"error": <error JSON>}``.
Each call runs on the project's kept ``Canal`` (``kept``), built again whenever its settings changed.
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
    from canal.server.daemon import Handler
    from canal.server.kept import KeptCanals

log = logging.getLogger("canal.server")


def api_handler(kept: KeptCanals) -> Handler:
    """The ``api`` op, serving each call on ``kept``'s Canal of the project."""
    return lambda conn, request: handle_api(conn, request, kept)


def handle_api(conn: Connection, request: dict[str, Any], kept: KeptCanals) -> int:
    try:
        with interruptible(conn.interrupt):
            answer = {"result": _call(request, kept)}
    except CanalError as exc:
        # the hint as prose and the next actions as data: the remote caller words them itself
        answer = {"error": {**error_json(exc), "hint": exc.hint, "exit_code": exc.exit_code}}
    except Exception as exc:
        log.exception("API call %s failed", request.get("call"))
        answer = {"error": {"status": "error", "code": "INTERNAL_ERROR", "message": str(exc), "hint": "",
                            "details": {}}}
    conn.send_json(wire.DATA, answer)
    return 0


def _call(request: dict[str, Any], kept: KeptCanals) -> Any:
    from canal.runtime.calls import operation, serve

    call = str(request.get("call"))
    operation(call)  # an unknown call is refused before the project is opened
    with kept.use(Path(str(request["project"])), str(request.get("sandbox") or "default"),
                  str(request.get("actor") or "agent")) as canal:
        return serve(canal, call, dict(request.get("args") or {}))
