"""The client-server protocol on the Unix socket (standard library only).

Every message is a frame: one kind byte, a 4-byte big-endian length, the payload. JSON payloads for
control, raw bytes for data. A connection starts with ``hello`` both ways; the server answers with its
build id, and a client whose build differs only ever asks that server to stop.

Client -> server: ``H`` hello, ``R`` request (JSON), ``I`` stdin bytes, ``E`` end of stdin,
``S`` a signal (JSON ``{"signal": "INT"}``).
Server -> client: ``H`` hello, ``O`` stdout bytes, ``F`` stderr bytes, ``C`` stdin credit (JSON
``{"bytes": n}``: how much more stdin the client may send), ``X`` the end (JSON ``{"exit": n}``),
``D`` data (JSON: the answer to ``status`` and ``stop``).
"""

from __future__ import annotations

import _socket
import struct

from canal.client import cjson

TYPE_CHECKING = False  # typing's import costs the thin client's start-up; mypy reads this name the same
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
MAX_FRAME = 16 * 1024 * 1024
HEADER = struct.Struct(">cI")

HELLO, REQUEST, STDIN, STDIN_END, SIGNAL = b"H", b"R", b"I", b"E", b"S"
STDOUT, STDERR, CREDIT, EXIT, DATA = b"O", b"F", b"C", b"X", b"D"


class Socket(_socket.socket):
    """A socket with ``with``: ``socket.socket``'s base, which the thin client uses alone (the ``socket``
    module imports enum and selectors, 2-5 ms of every call). The server's sockets are ``socket.socket``s,
    which the functions below take as well."""

    __slots__ = ()

    def __enter__(self) -> Socket:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class WireError(Exception):
    """The other side closed the connection or broke the protocol."""


def encode(kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload)) + payload


def send(sock: _socket.socket, kind: bytes, payload: bytes = b"") -> None:
    sock.sendall(encode(kind, payload))


def send_json(sock: _socket.socket, kind: bytes, data: dict[str, Any]) -> None:
    send(sock, kind, cjson.dumps(data).encode())


def _recv_exact(sock: _socket.socket, n: int) -> bytes:
    parts = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            msg = "the connection closed"
            raise WireError(msg)
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def recv(sock: _socket.socket, limit: int = MAX_FRAME) -> tuple[bytes, bytes]:
    """One frame (kind, payload); ``WireError`` when the peer is gone or oversteps the protocol (a frame
    over ``limit`` is refused from its header, before its payload is read)."""
    kind, length = HEADER.unpack(_recv_exact(sock, HEADER.size))
    if length > limit:
        msg = f"frame of {length} bytes is over the limit"
        raise WireError(msg)
    return kind, _recv_exact(sock, length)


def loads(payload: bytes) -> dict[str, Any]:
    try:
        data = cjson.loads(payload)
    except ValueError as exc:
        msg = f"not JSON: {exc}"
        raise WireError(msg) from exc
    if not isinstance(data, dict):
        msg = "a control frame must be a JSON object"
        raise WireError(msg)
    return data


def recv_json(sock: _socket.socket, expect: bytes) -> dict[str, Any]:
    kind, payload = recv(sock)
    if kind != expect:
        msg = f"expected frame {expect!r}, got {kind!r}"
        raise WireError(msg)
    return loads(payload)


def peer_uid(sock: _socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket (SO_PEERCRED, set by the kernel)."""
    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid
