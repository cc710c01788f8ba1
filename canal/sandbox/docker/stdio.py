"""A program in a sandbox whose stdin and stdout are a byte pipe to the host (an MCP stdio server).

``docker exec`` with no tty and no shell: the argv reaches the program whole, as the sandbox's user, with
the container's hardening; stdout arrives as the engine's frames (stream, length, payload), stderr is
kept as a bounded tail for error messages. One reader at a time (the caller sends a request, then reads
its lines).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from typing import Any

import docker

from canal.sandbox.docker.errors import translating

_HEADER = struct.Struct(">BxxxI")
STDERR_TAIL = 4096


class ChannelTimeout(Exception):
    """No complete line before the deadline."""


class LineTooLong(Exception):
    """The program wrote more than the caller's limit without ending the line."""


class StdioChannel:
    def __init__(self, client: docker.DockerClient, container_id: str, argv: Sequence[str], *, user: str,
                 workdir: str, env: Mapping[str, str] | None = None) -> None:
        self.api = client.api
        with translating("start a program in", name=container_id):
            self.exec_id = self.api.exec_create(container_id, list(argv), stdin=True, stdout=True,
                                                stderr=True, tty=False, user=user, workdir=workdir,
                                                environment=dict(env or {}) or None)["Id"]
            self._raw: Any = self.api.exec_start(self.exec_id, socket=True)
        self.sock: socket.socket = getattr(self._raw, "_sock", self._raw)
        self.out = bytearray()
        self.err = bytearray()
        self.seen = 0  # bytes of stdout so far
        self.ended = False

    def send(self, data: bytes) -> None:
        """Write to the program's stdin; OSError when it is gone."""
        self.sock.sendall(data)

    def read_line(self, deadline: float, limit: int) -> bytes | None:
        """The next line of stdout without its newline; None at the end of the output. ``ChannelTimeout``
        at ``deadline`` (a ``time.monotonic`` value), ``LineTooLong`` past ``limit`` bytes."""
        while True:
            end = self.out.find(b"\n")
            if end >= 0:
                line = bytes(self.out[:end])
                del self.out[:end + 1]
                return line
            if len(self.out) > limit:
                raise LineTooLong(len(self.out))
            if self.ended:
                if self.out:
                    line = bytes(self.out)
                    self.out.clear()
                    return line
                return None
            self._fill(deadline)

    def _fill(self, deadline: float) -> None:
        header = self._recv_exact(_HEADER.size, deadline)
        if header is None:
            self.ended = True
            return
        stream, length = _HEADER.unpack(header)
        payload = self._recv_exact(length, deadline) or b""
        if stream == 1:
            self.out += payload
            self.seen += len(payload)
        else:
            self.err = (self.err + payload)[-STDERR_TAIL:]

    def _recv_exact(self, n: int, deadline: float) -> bytes | None:
        parts, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(min(n - got, 1 << 20))
            except TimeoutError:
                raise ChannelTimeout from None
            except OSError:
                chunk = b""
            if not chunk:
                return None
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    @property
    def stderr_tail(self) -> str:
        return bytes(self.err).decode("utf-8", errors="replace")

    def exit_code(self) -> int | None:
        """The program's exit status once it has ended, else None."""
        try:
            info = self.api.exec_inspect(self.exec_id)
        except docker.errors.APIError:
            return None
        return None if info.get("Running") else info.get("ExitCode")

    def close(self) -> None:
        """End its stdin (an MCP server exits at the end of its input) and release the connection."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
        for part in (self.sock, self._raw):
            with contextlib.suppress(OSError, AttributeError):
                part.close()
