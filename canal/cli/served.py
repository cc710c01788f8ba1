"""Run one forwarded ``canal`` command inside the server, exactly as ``canal`` would run it in-process.

The connection thread takes the client's working directory and umask (its own, unshared), its
environment and its streams (``server/routed.py``), and the client's interrupts (Ctrl-C, SIGTERM, a
hang-up) become the request's ``Interrupt``, which kills a command running in a sandbox.
"""

from __future__ import annotations

import logging
import os
import traceback
from typing import TYPE_CHECKING, Any

from canal.runtime.run.interrupt import interruptible
from canal.server import routed
from canal.server.conn import Connection

if TYPE_CHECKING:
    from canal.runtime.sandboxes.resources import Resources

log = logging.getLogger("canal.server")


def exit_code(exc: SystemExit) -> int:
    """What Python's own exit would make of ``SystemExit(code)``."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    import sys

    sys.stderr.write(f"{code}\n")
    return 1


def handle_cli(conn: Connection, request: dict[str, Any], resources: Resources) -> int:
    """Run ``canal ARGV`` for the client, its ``Canal`` given the server's ``resources``."""
    argv = [str(a) for a in request.get("argv") or []]
    env = {str(k): str(v) for k, v in (request.get("env") or {}).items()}
    tty = {str(k): bool(v) for k, v in (request.get("tty") or {}).items()}
    routed.private_fs()
    os.umask(int(request.get("umask", 0o022)) & 0o777)
    with routed.request_io(conn, env=env, tty=tty, encoding=str(request.get("encoding") or "utf-8"),
                           errors=str(request.get("errors") or "strict")) as io, \
            interruptible(conn.interrupt):
        cwd = str(request.get("cwd") or "/")
        try:
            os.chdir(cwd)
        except OSError as exc:
            io.stderr.write(f"canal: cannot enter the working directory {cwd}: {exc.strerror}\n")
            return 125
        return run(argv, resources)


def run(argv: list[str], resources: Resources | None) -> int:
    """``canal ARGV`` in this process, with ``resources`` for its ``Canal`` (None: it owns its own);
    returns the exit status."""
    from canal.cli.main import cli

    try:
        cli.main(args=argv, prog_name="canal", standalone_mode=True, obj=resources)
    except SystemExit as exc:
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130
    except Exception:
        import sys

        traceback.print_exc(file=sys.stderr)
        log.exception("canal %s failed", " ".join(argv[:2]))
        return 1
    return 0
