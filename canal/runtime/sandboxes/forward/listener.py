"""``Forwarder``: listens on the host's loopback and relays each connection to a port inside a sandbox,
through the sandbox's background agent (the sandbox keeps ``network: none``; nothing is published).

Who owns the listener: whoever opened it, for as long as it lives. ``canal port-forward`` runs in the
foreground like ``kubectl port-forward`` (the listener is in the Canal server, tied to that call: Ctrl-C
or the caller going away closes it); a task's ``--forward`` lives and dies with the task.

Only the user running Canal may connect (``peer.py``); a connection nothing answers inside is closed
with an event saying so, and the forwarder keeps listening. Its opening and closing are audited, the
closing with the connections and bytes relayed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from canal.core.errors import CanalError
from canal.core.next import act
from canal.runtime.sandboxes.forward.errors import FORWARD_PORT_IN_USE
from canal.runtime.sandboxes.forward.peer import peer_uid
from canal.runtime.sandboxes.forward.relay import Connection
from canal.runtime.sandboxes.forward.spec import ForwardSpec, endpoint
from canal.sandbox.docker.background import BackgroundBackend
from canal.sandbox.errors import SandboxNotFound, SandboxNotRunning


@dataclass(frozen=True)
class ForwardEvent:
    kind: str  # failed | refused | error | gone
    number: int
    client: str
    message: str


Audit = Callable[[str, dict[str, Any]], object]


class Forwarder:
    def __init__(self, backend: BackgroundBackend, container: str, sandbox: str, spec: ForwardSpec, *,
                 audit: Audit, on_event: Callable[[ForwardEvent], None] | None = None,
                 task: str | None = None, same_user_only: bool = True) -> None:
        self.backend = backend
        self.container = container
        self.sandbox = sandbox
        self.spec = spec
        self.audit = audit
        self.on_event = on_event
        self.task = task
        self.same_user_only = same_user_only
        self._lock = threading.Lock()
        self._active: set[Connection] = set()
        self.stats = {"connections": 0, "failed": 0, "refused_peers": 0, "bytes_to_sandbox": 0,
                      "bytes_from_sandbox": 0}
        self.closed = threading.Event()
        self.gone = ""  # why it stopped by itself (its sandbox went away)
        self.listener = self._bind()
        self.port = self.listener.getsockname()[1]
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._accept_loop, name=f"canal-fwd-{self.port}", daemon=True)

    @property
    def address(self) -> str:
        return endpoint(self.spec.address, self.port)

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.spec.address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not a second listener: TIME_WAIT only
        try:
            sock.bind((self.spec.address, self.spec.host_port))
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                msg = (f"Port {self.spec.host_port} on {self.spec.address} is already in use on the host: "
                       f"something else listens there (another forward?). Nothing was forwarded.")
                other = act("port_forward", spec=f"{min(65535, self.spec.host_port + 1)}:{self.spec.port}",
                            sandbox=self.sandbox)
                raise FORWARD_PORT_IN_USE(msg, hint="pick another host port (0: any free one)", next=other,
                                       details={"listen": self.spec.listen, "port": self.spec.port}) from exc
            raise
        sock.listen(64)
        sock.settimeout(0.5)
        return sock

    def start(self) -> Forwarder:
        self.audit("forward.opened", {"sandbox": self.sandbox, "listen": self.address, "port": self.spec.port,
                                      "task": self.task})
        self._thread.start()
        return self

    def _accept_loop(self) -> None:
        number = 0
        while not self.closed.is_set():
            try:
                client, where = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            number += 1
            self._handle(client, number, f"{where[0]}:{where[1]}")

    def _handle(self, client: socket.socket, number: int, where: str) -> None:
        if self.same_user_only and peer_uid(client) != os.geteuid():
            with self._lock:
                self.stats["refused_peers"] += 1
            self._event("refused", number, where, f"connection {number} from {where} refused: it does not "
                        f"come from a process of uid {os.geteuid()}, the user running Canal")
            client.close()
            return
        client.settimeout(None)
        with contextlib.suppress(OSError):  # what the relay writes is what the port sent: no Nagle delay
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Connection(client, number, self._ended)
        try:
            relay = self.backend.open_stream(self.container, self.spec.port, conn)
        except (SandboxNotFound, SandboxNotRunning) as exc:
            client.close()
            self.gone = f"sandbox {self.sandbox} is gone ({exc.code}): stopped forwarding {self.address}"
            self._event("gone", number, where, self.gone)
            threading.Thread(target=self.close, args=("the sandbox is gone",), daemon=True).start()
            return
        except CanalError as exc:
            client.close()
            self._event("error", number, where, f"connection {number} from {where}: {exc.message}")
            return
        with self._lock:
            self.stats["connections"] += 1
            self._active.add(conn)
        conn.start(relay)

    def _ended(self, conn: Connection) -> None:
        with self._lock:
            self._active.discard(conn)
            self.stats["bytes_to_sandbox"] += conn.bytes_up
            self.stats["bytes_from_sandbox"] += conn.bytes_down
            if conn.state == "failed":
                self.stats["failed"] += 1
        if conn.state == "failed":
            self._event("failed", conn.number, "", f"connection {conn.number}: nothing listens on port "
                        f"{self.spec.port} in sandbox {self.sandbox} ({conn.error}); still forwarding "
                        f"{self.address}")

    def _event(self, kind: str, number: int, client: str, message: str) -> None:
        if self.on_event is not None:
            with contextlib.suppress(Exception):
                self.on_event(ForwardEvent(kind, number, client, message))

    def close(self, why: str = "closed") -> dict[str, Any]:
        """Stop listening, drop the open connections, and record the totals (once)."""
        if self.closed.is_set():
            return self.summary()
        self.closed.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self._lock:
            active = list(self._active)
        for conn in active:
            conn.reset(f"the forward closed ({why})")
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            with self._lock:
                if not self._active:
                    break
            time.sleep(0.01)
        summary = self.summary()
        self.audit("forward.closed", {**summary, "why": why})
        return summary

    def summary(self) -> dict[str, Any]:
        with self._lock:
            stats = dict(self.stats)
        return {"sandbox": self.sandbox, "listen": self.address, "port": self.spec.port, "task": self.task,
                "duration_ms": int((time.monotonic() - self.started) * 1000), **stats}
