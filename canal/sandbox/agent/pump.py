"""The session agent's output pump (stdlib only; runs inside the sandbox).

It forwards a command's stdout and stderr as frames as they come, feeds its stdin, beats while the
command runs, and watches the hard and idle deadlines. What "the command" is stays abstract
(``Child``): a process the agent started, or a command run by the session's long-lived shell.

While a command runs the pump also reads the agent's own input (``Input``) for control frames of that
request: ``stdin`` (more bytes for the command), ``eof`` (its stdin ends), ``kill`` (the client
interrupted it: Ctrl-C, SIGTERM, hang-up). The host closing the session also kills the command.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import struct
import time
from collections.abc import Callable, Iterator

TYPE_CHECKING = False  # typing's import is milliseconds of every session's start (mypy reads this the same)
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Child(Protocol):
        """What the pump waits for (the processes and shell runs of main.py and shell.py are ones)."""

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


class Input:
    """The agent's stdin: requests between commands, control frames during one (the same framing:
    4-byte length, a JSON header, ``stdin_len`` bytes). Bytes read ahead are kept for the next reader."""

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.eof = False

    def read_exact(self, n: int) -> bytes:
        """Blocking; ``EOFError`` when the host closed the session."""
        while len(self.buf) < n:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read_frame(self) -> tuple[dict[str, Any], bytes]:
        size = struct.unpack(">I", self.read_exact(4))[0]
        header = json.loads(self.read_exact(size))
        length = int(header.get("stdin_len") or 0)
        return header, self.read_exact(length) if length else b""

    def pull(self) -> None:
        """One read, after a select said the fd is readable (so it does not block)."""
        chunk = os.read(self.fd, 1 << 20)
        if chunk:
            self.buf += chunk
        else:
            self.eof = True

    def frames(self) -> Iterator[tuple[dict[str, Any], bytes]]:
        """Complete control frames already read; a request frame is left for the serve loop."""
        while len(self.buf) >= 4:
            size = struct.unpack(">I", self.buf[:4])[0]
            if len(self.buf) < 4 + size:
                return
            header = json.loads(bytes(self.buf[4:4 + size]))
            if "ctl" not in header:
                return
            length = int(header.get("stdin_len") or 0)
            if len(self.buf) < 4 + size + length:
                return
            payload = bytes(self.buf[4 + size:4 + size + length])
            del self.buf[:4 + size + length]
            yield header, payload


class Pump:
    """Forwards output as frames (``o``/``e``), feeds stdin, beats (``h``), watches deadlines."""

    def __init__(self, child: Child, outputs: dict[int, bytes], stdin_fd: int | None,
                 stdin: bytes | None, control: Input | None = None, request_id: str | None = None,
                 stream: bool = False) -> None:
        self.child = child
        self.control = control
        self.request_id = request_id
        self.stdin_eof = not stream  # a streamed stdin stays open until the host says it ended
        self.killed: str | None = None  # why: the client's signal name, or "host" when it went away
        self.sel = selectors.DefaultSelector()
        self.kinds = dict(outputs)
        self.owned = [*outputs, *([stdin_fd] if stdin_fd is not None else [])]
        for fd in outputs:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
        self.stdin_fd = stdin_fd
        self.pending = memoryview(stdin or b"")
        self.feeding = False
        if stdin_fd is not None:
            os.set_blocking(stdin_fd, False)
            self._want_write()
        if control is not None:
            self.sel.register(control.fd, selectors.EVENT_READ)
        watch = child.watch_fd()
        if watch is not None:
            self.sel.register(watch, selectors.EVENT_READ)
        self.watch = watch
        self.last_output = time.monotonic()

    def run(self, timeout_s: float | None, idle_s: float | None,
            over: Callable[[], bool] | None = None, beat: Callable[[], None] | None = None) -> str:
        """Returns the end reason: exited, hard_timeout, idle_timeout, wedged, interrupted or
        workspace_quota (``over`` said the workspace grew past its quota). ``beat`` runs at each
        heartbeat (the agent's look at the process count)."""
        start = last_beat = time.monotonic()
        exited_at: float | None = None
        self.handle_frames()
        while True:
            now = time.monotonic()
            if self.killed is not None and exited_at is None:
                return "interrupted"
            if exited_at is None and self.child.finished():
                exited_at = now
            if exited_at is not None and (now - exited_at > DRAIN_AFTER_EXIT_S or not self.kinds):
                return "exited"
            if exited_at is None and timeout_s is not None and now - start >= timeout_s:
                return "hard_timeout"
            if exited_at is None and idle_s is not None and now - self.last_output >= idle_s:
                return "idle_timeout"
            if exited_at is None and over is not None and over():
                return "workspace_quota"
            if now - last_beat >= HEARTBEAT_S:
                write_frame(b"h", b"")
                last_beat = now
                if beat is not None:
                    beat()
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
            elif self.control is not None and key.fd == self.control.fd:
                self.take_control()
            else:
                self.feed(key.fd)

    def take_control(self) -> None:
        assert self.control is not None
        self.control.pull()
        if self.control.eof:
            self.sel.unregister(self.control.fd)
            self.killed = "host"
            return
        self.handle_frames()

    def handle_frames(self) -> None:
        """Act on the control frames read so far (some may have come in with the request itself)."""
        if self.control is None:
            return
        for header, payload in self.control.frames():
            if header.get("id") != self.request_id:
                continue  # a late frame of an earlier request
            what = header.get("ctl")
            if what == "kill":
                self.killed = str(header.get("signal") or "host")
            elif what == "stdin" and self.stdin_fd is not None and not self.stdin_eof:
                self.pending = memoryview(bytes(self.pending) + payload)
                self._want_write()
            elif what == "eof":
                self.stdin_eof = True
                if not self.pending:
                    self._close_stdin()

    def _want_write(self) -> None:
        if self.stdin_fd is None or self.feeding:
            return
        if self.pending:
            self.sel.register(self.stdin_fd, selectors.EVENT_WRITE)
            self.feeding = True
        elif self.stdin_eof:
            self._close_stdin()

    def _close_stdin(self) -> None:
        fd, self.stdin_fd = self.stdin_fd, None
        if fd is None:
            return
        if self.feeding:
            self.sel.unregister(fd)
            self.feeding = False
        self.owned.remove(fd)
        os.close(fd)

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
            self.stdin_eof = True
        if not self.pending:
            self.sel.unregister(fd)
            self.feeding = False
            if self.stdin_eof:
                self._close_stdin()

    def close(self) -> None:
        self.sel.close()
        for fd in self.owned:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.owned.clear()
