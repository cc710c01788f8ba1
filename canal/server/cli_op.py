"""The ``cli`` op: run one forwarded ``canal`` command inside the server, exactly as ``canal`` would run it
in-process.

The connection thread takes the client's working directory and umask (its own, unshared), its
environment and its streams (``routed.py``), and the client's interrupts (Ctrl-C, SIGTERM, a hang-up)
become the request's ``Interrupt``, which kills a command running in a sandbox. The command itself is
the CLI's: the server finds its in-server entry by name (``CLI_MODULE``: ``run`` and ``preload``), as the
CLI finds its front ends, so the server never imports the CLI and the CLI never imports the server.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, cast

from canal.runtime.run.interrupt import interruptible
from canal.server import routed
from canal.server.conn import Connection

if TYPE_CHECKING:
    from canal.runtime.sandboxes.resources import Resources
    from canal.server.daemon import Handler

CLI_MODULE = "canal.cli.served"


class ServedCli(Protocol):
    """What ``CLI_MODULE`` offers the server."""

    def run(self, argv: list[str], resources: Resources | None) -> int: ...

    def preload(self) -> list[Callable[[], object]]: ...


def served_cli() -> ServedCli:
    return cast("ServedCli", import_module(CLI_MODULE))


def cli_handler(resources: Resources) -> Handler:
    """The ``cli`` op, each command's ``Canal`` given the server's ``resources``."""
    return lambda conn, request: handle_cli(conn, request, resources)


def handle_cli(conn: Connection, request: dict[str, Any], resources: Resources) -> int:
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
        return served_cli().run(argv, resources)
