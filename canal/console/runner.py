"""Serving the console: uvicorn on 127.0.0.1:PORT in a thread of the Canal server (or of ``canal console``
in the foreground when there is no server). The socket is bound here first, so a taken port is one clear
error (``CONSOLE_PORT_BUSY``) instead of a log line in another thread."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from canal.console.app import Console, build
from canal.console.errors import CONSOLE_PORT_BUSY

if TYPE_CHECKING:
    from canal.runtime.sandboxes.resources import Resources

log = logging.getLogger("canal.console")
HOST = "127.0.0.1"
START_TIMEOUT_S = 10.0


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        msg = (f"the console cannot listen on {HOST}:{port}: {exc.strerror} (another program, or another "
               "project's console)")
        raise CONSOLE_PORT_BUSY(msg, hint="set another approvals.console.port in canal.yaml, or stop what "
                                   "holds the port", details={"port": port}) from exc
    sock.listen(64)
    sock.set_inheritable(False)
    return sock


class ConsoleServer:
    """One project's console; a resident of the Canal server's resources (closed when it stops)."""

    def __init__(self, project_dir: Path, port: int, session_ttl_s: float,
                 resources: Resources | None = None) -> None:
        self.console = Console(project_dir, port, session_ttl_s, resources)
        self.url = f"http://localhost:{port}/"
        self._prepare()

    def _prepare(self) -> None:
        self._sock = _bind(self.console.port)
        config = uvicorn.Config(build(self.console), log_level="warning", access_log=False, lifespan="off",
                                proxy_headers=False, server_header=False, ws="none", http="h11",
                                timeout_keep_alive=5, limit_concurrency=32)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="canal-console", daemon=True)

    def revive(self) -> ConsoleServer:
        """Serve again if the serving thread ended (its sessions are kept)."""
        if not self._thread.is_alive():
            with contextlib.suppress(OSError):
                self._sock.close()
            self._prepare()
            self.start()
        return self

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        except BaseException:  # uvicorn exits with SystemExit on a fatal error: log it, end the thread
            log.exception("the console on %s stopped", self.url)

    def start(self) -> ConsoleServer:
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        log.info("console of %s on %s", self.console.project_dir, self.url)
        return self

    def alive(self) -> bool:
        return self._thread.is_alive()

    def busy(self) -> bool:
        """A logged-in session is live: the Canal server does not idle out under the approver."""
        return self.console.sessions.any_logged_in()

    def close(self, why: str = "") -> None:
        self._server.should_exit = True
        self._thread.join(5.0)
        with contextlib.suppress(OSError):
            self._sock.close()

    def wait(self) -> None:
        while self._thread.is_alive():
            self._thread.join(0.5)
