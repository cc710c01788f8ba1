"""The server's side of one client connection: frames out under a lock, a reader thread for what the
client sends while its request runs (stdin, signals, hang-up), and stdin on demand.

A kept connection (the Python API's, ``Canal.connect``) carries one request after another: its reader
queues each next request for the session loop, and ``bye`` tells the client that the request it may be
sending now will not be served here (the server is stopping): it sends it again to the next server.

Stdin flows only when the request reads it: the server grants the client credit (``C`` frames) as the
reader asks, so a client never reads a pipe or a terminal nobody wants, and never sends more than the
window the server is ready to hold.
"""

from __future__ import annotations

import contextlib
import io
import logging
import queue
import socket
import threading
from typing import Any

from canal.client import wire
from canal.runtime.run.interrupt import Interrupt

log = logging.getLogger("canal.server")
STDIN_WINDOW = 256 * 1024
SIGNALS = frozenset({"INT", "TERM", "HUP", "PIPE"})


class Connection:
    def __init__(self, sock: socket.socket, peer_pid: int) -> None:
        self.sock = sock
        self.peer_pid = peer_pid
        self._send_lock = threading.Lock()
        self.gone = False
        self.interrupt = Interrupt()
        self.stdin = StdinBuffer(self)
        self._requests: queue.SimpleQueue[bytes | None] | None = None  # a kept connection's next requests

    def send(self, kind: bytes, payload: bytes = b"") -> None:
        """Best effort: a client that went away is noticed by the reader; writes after that are dropped."""
        if self.gone:
            return
        frame = wire.encode(kind, payload)
        with self._send_lock:
            try:
                self.sock.sendall(frame)
            except OSError:
                self.gone = True

    def send_json(self, kind: bytes, data: dict[str, object]) -> None:
        import json

        self.send(kind, json.dumps(data).encode())

    def start_reader(self, *, kept: bool = False) -> threading.Thread:
        """Read what the client sends; ``kept``: requests after this one are queued for ``next_request``."""
        if kept:
            self._requests = queue.SimpleQueue()
        thread = threading.Thread(target=self._read_loop, name=f"canal-conn-{self.peer_pid}", daemon=True)
        thread.start()
        return thread

    def _read_loop(self) -> None:
        try:
            while True:
                kind, payload = wire.recv(self.sock)
                if kind == wire.STDIN:
                    self.stdin.feed(payload)
                elif kind == wire.STDIN_END:
                    self.stdin.end()
                elif kind == wire.SIGNAL:
                    name = str(wire.loads(payload).get("signal", ""))
                    if name in SIGNALS:
                        self.interrupt.fire(f"SIG{name}")
                elif kind == wire.REQUEST and self._requests is not None:
                    self._requests.put(payload)
                else:
                    msg = f"unexpected frame {kind!r} during a request"
                    raise wire.WireError(msg)
        except (wire.WireError, OSError) as exc:
            self.gone = True
            self.stdin.end()
            self.interrupt.fire("the client went away")
            if self._requests is not None:
                self._requests.put(None)
            log.debug("connection of pid %s ended: %s", self.peer_pid, exc)

    def next_request(self) -> dict[str, Any] | None:
        """A kept connection's next request, each with its own interrupt; None when the client went
        away or was told ``bye``."""
        assert self._requests is not None, "not a kept connection"
        payload = self._requests.get()
        if payload is None:
            return None
        self.interrupt = Interrupt()
        return wire.loads(payload)

    def bye(self, why: str) -> None:
        """The client's next request (on its way, or to come) is not served on this connection."""
        self.send_json(wire.DATA, {"bye": why})
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
        if self._requests is not None:
            self._requests.put(None)

    def close(self) -> None:
        self.stdin.close()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


class StdinBuffer:
    """What the client sent of its stdin, read by the request as it needs it."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._cond = threading.Condition()
        self._buf = bytearray()
        self._eof = False
        self._closed = False
        self._granted = 0  # credit given and not yet used by the client

    def feed(self, data: bytes) -> None:
        with self._cond:
            self._granted = max(0, self._granted - len(data))
            self._buf += data
            self._cond.notify_all()

    def end(self) -> None:
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def close(self) -> None:
        """The request is over: a reader still waiting gets end of file."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes (``n`` < 0: one chunk), blocking until some come; b"" at end of stdin."""
        with self._cond:
            while not self._buf and not self._eof and not self._closed:
                self._ask()
                self._cond.wait()
            take = len(self._buf) if n < 0 else min(n, len(self._buf))
            out = bytes(self._buf[:take])
            del self._buf[:take]
            return out

    def _ask(self) -> None:
        more = STDIN_WINDOW - self._granted - len(self._buf)
        if more >= STDIN_WINDOW // 2:
            self._granted += more
            self._conn.send_json(wire.CREDIT, {"bytes": more})


class RawStdin(io.RawIOBase):
    """``StdinBuffer`` as a raw stream, so ``io.BufferedReader`` and ``TextIOWrapper`` can sit on it."""

    def __init__(self, buffer: StdinBuffer) -> None:
        super().__init__()
        self._buffer = buffer

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._buffer.read(len(b))
        b[: len(data)] = data
        return len(data)


class RawOut(io.RawIOBase):
    """Bytes written become ``O`` (stdout) or ``F`` (stderr) frames to the client."""

    def __init__(self, conn: Connection, kind: bytes) -> None:
        super().__init__()
        self._conn = conn
        self._kind = kind

    def writable(self) -> bool:
        return True

    def write(self, b: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        data = bytes(b)
        for start in range(0, len(data), wire.MAX_FRAME // 2):
            self._conn.send(self._kind, data[start:start + wire.MAX_FRAME // 2])
        return len(data)
