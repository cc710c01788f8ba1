"""One forwarded connection: a client socket on the host's loopback, relayed through the sandbox's
background agent to a port on the sandbox's own loopback.

Two threads: ``up`` reads the client and sends, never more than the agent's window allows (it acks
what it passed on); the background channel's reader hands what the port sends to ``data``, which
queues it, and ``down`` writes the queue to the client and acks. Half-closes pass through both ways.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import deque
from collections.abc import Callable

from canal.sandbox.docker.background import WINDOW, Relay

CHUNK = 65536


class Connection:
    """Implements ``StreamSink``; ``outcome`` is ``("closed", None)``, ``("failed", why)``..."""

    def __init__(self, client: socket.socket, number: int, on_end: Callable[[Connection], None]) -> None:
        self.client = client
        self.number = number
        self.on_end = on_end
        self.relay: Relay | None = None
        self._cond = threading.Condition()
        self.state = "connecting"  # connecting | open | failed | closed
        self.error: str | None = None
        self.error_code = ""
        self.credit = WINDOW
        self.queue: deque[bytes] = deque()
        self.remote_eof = False
        self.remote_closed = False
        self.bytes_up = 0
        self.bytes_down = 0
        self._threads: list[threading.Thread] = []
        self._ended = False
        self.shut = False

    def start(self, relay: Relay) -> None:
        self.relay = relay
        for target, name in ((self._up, "up"), (self._down, "down")):
            thread = threading.Thread(target=target, name=f"canal-fwd-{self.number}-{name}", daemon=True)
            self._threads.append(thread)
            thread.start()

    # StreamSink (called on the background channel's reader thread: never blocks) --------------
    def opened(self) -> None:
        with self._cond:
            self.state = "open"
            self._cond.notify_all()

    def failed(self, error: str, code: str) -> None:
        with self._cond:
            self.state, self.error, self.error_code = "failed", error, code
            self.remote_closed = True
            self._cond.notify_all()

    def data(self, data: bytes) -> None:
        with self._cond:
            self.queue.append(data)
            self._cond.notify_all()

    def acked(self, n: int) -> None:
        with self._cond:
            self.credit += n
            self._cond.notify_all()

    def eof(self) -> None:
        with self._cond:
            self.remote_eof = True
            self._cond.notify_all()

    def closed(self, error: str | None) -> None:
        with self._cond:
            if self.state != "failed":
                self.state = "closed"
            self.error = self.error or error
            self.remote_closed = True
            self._cond.notify_all()

    # the two directions ------------------------------------------------------------------------
    def _up(self) -> None:
        assert self.relay is not None
        with self._cond:
            self._cond.wait_for(lambda: self.state != "connecting")
            if self.state != "open":
                self._finish()
                return
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self.credit > 0 or self.remote_closed)
                    if self.remote_closed:
                        return
                    room = min(CHUNK, self.credit)
                data = self.client.recv(room)
                if not data:
                    self.relay.close_write()
                    return
                with self._cond:
                    self.credit -= len(data)
                    self.bytes_up += len(data)
                self.relay.send(data)
        except OSError:
            self.relay.reset()  # the client went away: drop the connection inside too
            self.closed("the client went away")

    def _down(self) -> None:
        assert self.relay is not None
        self.shut = False  # the client's writing half was closed after the port's eof
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(self._down_ready)
                    chunk = self.queue.popleft() if self.queue else None
                    done = chunk is None and self.remote_closed
                if chunk is not None:
                    self.client.sendall(chunk)
                    with self._cond:
                        self.bytes_down += len(chunk)
                    self.relay.ack(len(chunk))
                elif done:
                    break
                else:
                    self.shut = True
                    with contextlib.suppress(OSError):
                        self.client.shutdown(socket.SHUT_WR)
        except OSError:
            self.relay.reset()
            self.closed("the client went away")
        with self._cond:
            self._finish()

    def _down_ready(self) -> bool:
        return bool(self.queue) or self.remote_closed or (self.remote_eof and not self.shut)

    def _finish(self) -> None:
        """Once, when the down side is done (or the connection never opened): close and report."""
        if self._ended:
            return
        self._ended = True
        with contextlib.suppress(OSError):
            self.client.shutdown(socket.SHUT_RDWR)
        self.client.close()
        threading.Thread(target=self.on_end, args=(self,), daemon=True).start()

    def reset(self, why: str) -> None:
        """Drop it from the host's side (the forward is closing)."""
        if self.relay is not None:
            self.relay.reset()
        self.closed(why)
