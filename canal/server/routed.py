"""Run a client's command inside the server as if it ran in the client's own process.

Three things a process has once and a request needs its own of:

- standard streams: ``sys.stdin``/``stdout``/``stderr`` become proxies that write to (and read from)
  the connection of the request running in the current thread (and the threads it starts with a copied
  context), and to the server's log otherwise;
- environment: ``os.environ`` becomes a mapping that shows the requesting client's environment;
- working directory and umask: each request thread unshares its filesystem attributes
  (``unshare(CLONE_FS)``, as Samba's thread pool does), so ``chdir`` and ``umask`` stay per request.
"""

from __future__ import annotations

import ctypes
import io
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO

from canal.client.wire import STDERR, STDOUT
from canal.server.conn import Connection, RawOut, RawStdin

CLONE_FS = 0x00000200


@dataclass
class RequestIO:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    env: dict[str, str]


_request: ContextVar[RequestIO | None] = ContextVar("canal_request_io", default=None)


class _TtyRaw:
    """Mixin: the client's answer to ``isatty``."""

    tty = False

    def isatty(self) -> bool:
        return self.tty


class _Out(_TtyRaw, RawOut):
    pass


class _In(_TtyRaw, RawStdin):
    pass


class RoutedStream:
    """Stands in for ``sys.stdin``/``stdout``/``stderr``: the current request's stream, else ``fallback``."""

    def __init__(self, name: str, fallback: TextIO) -> None:
        self._name = name
        self._fallback = fallback

    def target(self) -> TextIO:
        req = _request.get()
        return self._fallback if req is None else getattr(req, self._name)

    def write(self, text: str) -> int:
        return self.target().write(text)

    def flush(self) -> None:
        self.target().flush()

    def isatty(self) -> bool:
        return self.target().isatty()

    def __iter__(self) -> Iterator[str]:
        return iter(self.target())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target(), name)


class RoutedEnviron(MutableMapping[str, str]):
    """``os.environ`` for a server: the requesting client's environment, else the server's own."""

    def __init__(self, real: MutableMapping[str, str]) -> None:
        self.real = real

    def _env(self) -> MutableMapping[str, str]:
        req = _request.get()
        return self.real if req is None else req.env

    def __getitem__(self, key: str) -> str:
        return self._env()[key]

    def __setitem__(self, key: str, value: str) -> None:
        self._env()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._env()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._env()))

    def __len__(self) -> int:
        return len(self._env())

    def copy(self) -> dict[str, str]:
        return dict(self._env())


def install(log: TextIO) -> None:
    """Route the process's standard streams and environment (once, at server start)."""
    sys.stdin = RoutedStream("stdin", io.TextIOWrapper(io.BytesIO(b"")))
    sys.stdout = RoutedStream("stdout", log)
    sys.stderr = RoutedStream("stderr", log)
    if not isinstance(os.environ, RoutedEnviron):
        # replaced, not cleared: the proxy reads the server's own environment outside requests
        os.environ = RoutedEnviron(os.environ)  # type: ignore[assignment]  # noqa: B003


def active() -> bool:
    return _request.get() is not None


def private_fs() -> None:
    """Give this thread its own working directory and umask (Linux ``unshare(CLONE_FS)``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_FS) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare(CLONE_FS): {os.strerror(errno)}")


def _text(raw: io.RawIOBase, writable: bool, encoding: str, errors: str, tty: bool) -> TextIO:
    raw.tty = tty  # type: ignore[attr-defined]
    buffered: io.BufferedWriter | io.BufferedReader = (io.BufferedWriter(raw) if writable
                                                        else io.BufferedReader(raw))
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, line_buffering=tty and writable)


@contextmanager
def request_io(conn: Connection, *, env: Mapping[str, str], tty: Mapping[str, bool],
               encoding: str = "utf-8", errors: str = "strict") -> Iterator[RequestIO]:
    """Within the block, this thread's standard streams and environment are the client's."""
    req = RequestIO(
        stdin=_text(_In(conn.stdin), False, encoding, errors, bool(tty.get("stdin"))),
        stdout=_text(_Out(conn, STDOUT), True, encoding, errors, bool(tty.get("stdout"))),
        stderr=_text(_Out(conn, STDERR), True, encoding, "backslashreplace", bool(tty.get("stderr"))),
        env=dict(env))
    req.stderr.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    token = _request.set(req)
    try:
        yield req
    finally:
        # a thread still reading stdin for the request (a command's stdin feeder) gets end of file now,
        # and lets go of the reader's lock before the streams are dropped (their close needs that lock)
        conn.stdin.close()
        for stream in (req.stdout, req.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        _request.reset(token)
