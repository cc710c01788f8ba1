"""The session agent's output pump (stdlib only; runs inside the sandbox).

It forwards a command's stdout and stderr as frames as they come, feeds its stdin, beats while the
command runs, and watches the hard and idle deadlines. What "the command" is stays abstract
(``Child``): a process the agent started, or a command run by the session's long-lived shell.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import struct
import time
from typing import Protocol

CHUNK = 65536
HEARTBEAT_S = 1.0
DRAIN_AFTER_EXIT_S = 0.2


def write_frame(kind: bytes, payload: bytes) -> None:
    data = kind + struct.pack(">I", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def read_some(fd: int) -> bytes | None:
    """Up to CHUNK bytes; b"" at end of stream; None when nothing is ready yet."""
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return None


class Child(Protocol):
    """What the pump waits for."""

    def finished(self) -> bool:
        """True once the command has ended (cheap; called every turn)."""
        ...

    def watch_fd(self) -> int | None:
        """An fd whose readability may end the command (read by ``on_ready``), or None."""
        ...

    def on_ready(self) -> bool:
        """Read the watched fd; False once it needs no more watching."""
        ...

    def wait(self, timeout_s: float) -> None:
        """Block up to ``timeout_s`` for the end when there is nothing else to watch."""
        ...

    def wedged(self) -> bool:
        """True when the command can never finish by itself (checked once per heartbeat)."""
        ...


class Pump:
    """Forwards output as frames (``o``/``e``), feeds stdin, beats (``h``), watches deadlines."""

    def __init__(self, child: Child, outputs: dict[int, bytes], stdin_fd: int | None,
                 stdin: bytes | None) -> None:
        self.child = child
        self.sel = selectors.DefaultSelector()
        self.kinds = dict(outputs)
        self.owned = [*outputs, *([stdin_fd] if stdin_fd is not None else [])]
        for fd in outputs:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
        self.stdin_fd = stdin_fd
        self.pending = memoryview(stdin or b"")
        if stdin_fd is not None:
            os.set_blocking(stdin_fd, False)
            self.sel.register(stdin_fd, selectors.EVENT_WRITE)
        watch = child.watch_fd()
        if watch is not None:
            self.sel.register(watch, selectors.EVENT_READ)
        self.watch = watch
        self.last_output = time.monotonic()

    def run(self, timeout_s: float | None, idle_s: float | None) -> str:
        """Returns the end reason: exited, hard_timeout, idle_timeout or wedged."""
        start = last_beat = time.monotonic()
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is None and self.child.finished():
                exited_at = now
            if exited_at is not None and (now - exited_at > DRAIN_AFTER_EXIT_S or not self.kinds):
                return "exited"
            if exited_at is None and timeout_s is not None and now - start >= timeout_s:
                return "hard_timeout"
            if exited_at is None and idle_s is not None and now - self.last_output >= idle_s:
                return "idle_timeout"
            if now - last_beat >= HEARTBEAT_S:
                write_frame(b"h", b"")
                last_beat = now
                if exited_at is None and self.child.wedged():
                    return "wedged"
            self.step(0.05 if exited_at is None else 0.01)

    def step(self, wait_s: float) -> None:
        if not self.sel.get_map():
            self.child.wait(wait_s)
            return
        for key, _ in self.sel.select(timeout=wait_s):
            if key.fd in self.kinds:
                self.forward(key.fd)
            elif key.fd == self.watch:
                if not self.child.on_ready():
                    self.sel.unregister(key.fd)
                    self.watch = None
            else:
                self.feed(key.fd)

    def forward(self, fd: int) -> None:
        chunk = read_some(fd)
        if chunk:
            write_frame(self.kinds[fd], chunk)
            self.last_output = time.monotonic()
        elif chunk is not None:
            self.sel.unregister(fd)
            del self.kinds[fd]

    def feed(self, fd: int) -> None:
        try:
            self.pending = self.pending[os.write(fd, self.pending[:CHUNK]):]
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.pending = self.pending[:0]
        if not self.pending:
            self.sel.unregister(fd)
            self.owned.remove(fd)
            os.close(fd)

    def close(self) -> None:
        self.sel.close()
        for fd in self.owned:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.owned.clear()
