"""The server process: one per user and identity, on a Unix socket in the user's private runtime folder.

Lifecycle. ``acquire`` takes the identity's lock (flock, held for life: a second server of the same
identity exits at once), removes a stale socket left by a crashed server and binds a fresh one (0600,
under umask 077). ``serve`` accepts until ``stop`` (a client asked, SIGTERM, or a newer build replaced
it) or until nothing happened for the idle timeout. Stopping closes the socket and releases the lock
first, so a new server can start while in-flight requests are interrupted and finish; then the
``on_stop`` hooks close the warm state (sessions, pool).

Every connection: the peer's uid (SO_PEERCRED, from the kernel) must be the server's own; then
``hello`` both ways with the build id; a client of another build may only ask the server to stop.
An API request asking ``keep`` keeps its connection for the client's next API requests: while it waits
for one it does not count as active (the server may idle out), and a server that stops tells it ``bye``
(under the same lock that hands a request to the loop, so a request is either served or refused with
``bye``, never both: the client sends a refused one again, to the next server).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from canal.client import wire
from canal.client.errors import SERVER_PEER_REFUSED
from canal.client.paths import ServerPaths
from canal.runtime.errors import format_error
from canal.server.conn import Connection

log = logging.getLogger("canal.server")
Handler = Callable[[Connection, dict[str, Any]], int]
IDLE_TIMEOUT_S = 900.0
DRAIN_S = 10.0


class Daemon:
    def __init__(self, paths: ServerPaths, build: str, handlers: dict[str, Handler], *,
                 idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        self.paths = paths
        self.build = build
        self.handlers = handlers
        self.idle_timeout_s = idle_timeout_s
        self.started = time.time()
        self.on_stop: list[Callable[[], None]] = []
        self.status_extra: list[Callable[[], dict[str, Any]]] = []
        self.keep_awake: list[Callable[[], bool]] = []  # True: work goes on without a client (tasks)
        self._lock_fd: int | None = None
        self._listener: socket.socket | None = None
        self._sock_ino: int | None = None
        self._guard = threading.Lock()
        # held while a step of loading ahead runs (when_quiet): a request's handler starts after it
        self._loading = threading.Lock()
        self._active: set[Connection] = set()
        self._waiting: set[Connection] = set()  # kept connections between two requests
        self._last_activity = time.monotonic()
        self._stopping = threading.Event()
        self.served = 0
        self.accepted = 0  # connections (a kept one carries many requests)

    # lifecycle -------------------------------------------------------------------------------
    def acquire(self) -> bool:
        """Take the identity's lock and bind the socket; False when another server holds the lock."""
        fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.paths.socket)  # we hold the lock: whatever is there is a dead server's
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            listener.bind(str(self.paths.socket))
        finally:
            os.umask(old)
        os.chmod(self.paths.socket, 0o600)
        listener.listen(64)
        listener.settimeout(1.0)
        self._sock_ino = os.stat(self.paths.socket).st_ino
        self._listener = listener
        return True

    def serve(self) -> None:
        assert self._listener is not None
        log.info("serving on %s (build %s, pid %d)", self.paths.socket, self.build, os.getpid())
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                if self._idle():
                    log.info("idle for %.0f s: stopping", self.idle_timeout_s)
                    self.stop("idle")
                continue
            except OSError:
                if self._stopping.is_set():
                    break
                raise
            self.accepted += 1
            threading.Thread(target=self._connection, args=(sock,), name="canal-request", daemon=True).start()
        self._drain()

    def when_quiet(self, step: Callable[[], object]) -> bool:
        """Run ``step`` (loading ahead) now if no request is being served; False when one is (nothing
        ran). A request arriving meanwhile starts its handler once the step is over: two threads
        importing the same packages at once can be handed a partly imported one."""
        with self._loading:
            if not self.quiet():
                return False
            step()
            return True

    def quiet(self) -> bool:
        """True while no request is being served (a kept connection waiting for its next is quiet)."""
        with self._guard:
            return not self._active

    def _idle(self) -> bool:
        with self._guard:
            quiet = not self._active and time.monotonic() - self._last_activity > self.idle_timeout_s
        if quiet and any(busy() for busy in self.keep_awake):
            with self._guard:
                self._last_activity = time.monotonic()  # idle counts from when the last task ended
            return False
        return quiet

    def stop(self, why: str) -> None:
        """Stop accepting at once and let a new server start; in-flight requests are interrupted."""
        with self._guard:
            if self._stopping.is_set():
                return
            self._stopping.set()
            active = list(self._active)
            waiting = list(self._waiting)
        log.info("stopping: %s", why)
        self._release()
        for conn in active:
            conn.interrupt.fire(f"the Canal server stopped ({why})")
        for conn in waiting:
            conn.bye(f"the Canal server stopped ({why})")

    def _release(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept() on Linux
            self._listener.close()
        with contextlib.suppress(OSError):
            if os.stat(self.paths.socket).st_ino == self._sock_ino:
                os.unlink(self.paths.socket)
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock: the next server may start now
            self._lock_fd = None

    def _drain(self) -> None:
        deadline = time.monotonic() + DRAIN_S
        while time.monotonic() < deadline:
            with self._guard:
                if not self._active:
                    break
            time.sleep(0.05)
        for hook in self.on_stop:
            try:
                hook()
            except Exception:
                log.exception("a stop hook failed")

    # one connection -------------------------------------------------------------------------
    def _connection(self, sock: socket.socket) -> None:
        pid, uid = wire.peer_uid(sock)
        conn = Connection(sock, pid)
        with self._guard:
            self._active.add(conn)
            self._last_activity = time.monotonic()
        try:
            if uid != os.geteuid():
                self._refuse(conn, uid)
                return
            self._session(conn)
        except (wire.WireError, OSError) as exc:
            log.debug("connection of pid %d failed: %s", pid, exc)
        finally:
            conn.close()
            with self._guard:
                self._active.discard(conn)
                self._waiting.discard(conn)
                self._last_activity = time.monotonic()

    def _refuse(self, conn: Connection, uid: int) -> None:
        log.warning("refused a connection from uid %d (pid %d): this server serves uid %d only",
                    uid, conn.peer_pid, os.geteuid())
        refused = SERVER_PEER_REFUSED(
            f"This Canal server serves uid {os.geteuid()} only; your uid is {uid}. Nothing was run.",
            hint="run canal as yourself: your own server starts in your own runtime folder")
        conn.send(wire.STDERR, (format_error(refused.code, refused.message, refused.hint) + "\n").encode())
        conn.send_json(wire.EXIT, {"exit": 125})
        # let the refusal arrive: closing with the peer's bytes unread would reset the connection first
        with contextlib.suppress(OSError):
            conn.sock.shutdown(socket.SHUT_WR)
            conn.sock.settimeout(2.0)
            while conn.sock.recv(65536):
                pass

    def _session(self, conn: Connection) -> None:
        hello = wire.recv_json(conn.sock, wire.HELLO)
        conn.send_json(wire.HELLO, self.describe())
        request = wire.recv_json(conn.sock, wire.REQUEST)
        op = str(request.get("op", ""))
        same_build = hello.get("build") == self.build and hello.get("proto") == wire.PROTOCOL
        if op == "stop":
            conn.send_json(wire.DATA, {"stopping": True, "pid": os.getpid()})
            self.stop(str(request.get("why") or "asked by a client"))
            return
        if op == "status":
            conn.send_json(wire.DATA, self.status())
            return
        handler = self.handlers.get(op)
        if not same_build or handler is None:
            conn.send_json(wire.DATA, {"error": f"refused op {op!r} (build {self.build})"})
            return
        keep = op == "api" and request.get("keep") is True
        conn.start_reader(kept=keep)
        current: dict[str, Any] | None = request
        with self._loading:  # a step of loading ahead ends first (when_quiet)
            pass
        while current is not None:
            self.served += 1
            code = handler(conn, current)
            conn.send_json(wire.EXIT, {"exit": code})
            current = self._next(conn, op) if keep else None

    def _next(self, conn: Connection, op: str) -> dict[str, Any] | None:
        """A kept connection's next request, once the client sends one; None when it goes away or the
        server stops (then told ``bye``)."""
        with self._guard:
            self._active.discard(conn)
            self._last_activity = time.monotonic()
            stopping = self._stopping.is_set()
            if not stopping:
                self._waiting.add(conn)  # from here on, stop() says bye to it
        if stopping:
            conn.bye("the Canal server is stopping")
            return None
        request = None if conn.gone else conn.next_request()
        with self._guard:
            self._waiting.discard(conn)
            stopping = self._stopping.is_set()
            if request is not None and not stopping:
                self._active.add(conn)
                self._last_activity = time.monotonic()
        if request is not None and stopping:
            conn.bye("the Canal server is stopping")
            return None
        if request is not None and request.get("op") != op:
            refused = f"refused op {request.get('op')!r} on a kept {op} connection"
            conn.send_json(wire.DATA, {"error": refused})
            return None
        return request

    def describe(self) -> dict[str, Any]:
        return {"proto": wire.PROTOCOL, "build": self.build, "pid": os.getpid(), "started": self.started}

    def status(self) -> dict[str, Any]:
        with self._guard:
            active = len(self._active) - 1  # not counting the status call itself
        data: dict[str, Any] = {**self.describe(), "socket": str(self.paths.socket), "active": active,
                                "served": self.served, "accepted": self.accepted,
                                "idle_timeout_s": self.idle_timeout_s,
                                "uptime_s": round(time.time() - self.started, 1)}
        for extra in self.status_extra:
            data.update(extra())
        return data
