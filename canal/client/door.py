"""The approval door: a second socket of the server that other OS users may reach, for approvers only.

The server's own socket is its user's alone (a 0700 folder, peer uid checked). Approvers are other
users, so the server also listens on doors: Unix sockets in the abstract namespace, its own
(``@canal-approvals-<uid>-<fingerprint>``) and, while it holds it, the user's shared one
(``@canal-approvals-<uid>``, or the path in ``CANAL_APPROVAL_DOOR``), which sends an approver on to the
server owning the project (``door_route``). Anyone local may
connect; each request is one JSON frame answered by one, and the kernel's word on the client's uid
(SO_PEERCRED) travels with it to the handler, which decides. No hello and no build check: an approver's
``canal`` may be another installation. Standard library only (the client side is in the thin client).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import socket
import threading
from collections.abc import Callable
from typing import Any

from canal.client import wire

log = logging.getLogger("canal.server")
ENV_DOOR = "CANAL_APPROVAL_DOOR"
DOOR_PROTOCOL = 1
MAX_REQUEST = 256 * 1024
MAX_OPEN = 16  # requests served at once: anyone local may connect, so what they can make us hold is bounded
READ_TIMEOUT_S = 10.0  # a client that connects and says nothing is dropped (the handler is not timed)
DoorHandler = Callable[[int, dict[str, Any]], dict[str, Any]]


def door_address(uid: int, environ: dict[str, str] | None = None) -> str:
    """The door of the server running as ``uid``: a path, or an abstract name (leading NUL byte)."""
    env = os.environ if environ is None else environ
    return env.get(ENV_DOOR) or f"\0canal-approvals-{uid}"


def server_door(uid: int, fingerprint: str) -> str:
    """The door of one server of ``uid`` (``fingerprint``: its identity's, as in its socket's name)."""
    return f"\0canal-approvals-{uid}-{fingerprint}"


def shown(address: str) -> str:
    return "@" + address[1:] if address.startswith("\0") else address


class Door:
    def __init__(self, address: str, handler: DoorHandler) -> None:
        self.address = address
        self.handler = handler
        self._sock: socket.socket | None = None
        self._slots = threading.BoundedSemaphore(MAX_OPEN)
        self.error = ""  # why the last open failed

    @property
    def is_open(self) -> bool:
        return self._sock is not None

    def open(self, *, quiet: bool = False) -> bool:
        """Bind the door; False (with ``error``) when someone already holds it."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not self.address.startswith("\0"):
                _unlink_stale(self.address)
            sock.bind(self.address)
            if not self.address.startswith("\0"):
                os.chmod(self.address, 0o666)  # anyone may knock; the handler decides by peer uid
        except OSError as exc:
            self.error = str(exc)
            if not quiet:
                log.info("approval door %s not opened: %s", shown(self.address), exc)
            sock.close()
            return False
        self.error = ""
        sock.listen(16)
        self._sock = sock
        threading.Thread(target=self._serve, name="canal-door", daemon=True).start()
        log.info("approval door open on %s", shown(self.address))
        return True

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
            self._sock = None
            if not self.address.startswith("\0"):
                with contextlib.suppress(OSError):
                    os.unlink(self.address)

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):  # all slots busy: closed at once, never queued
                log.warning("approval door busy (%d requests open): a connection was closed", MAX_OPEN)
                conn.close()
                continue
            threading.Thread(target=self._one, args=(conn,), name="canal-door-request", daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            self._answer(conn)
        finally:
            self._slots.release()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(READ_TIMEOUT_S)
            try:
                _pid, uid = wire.peer_uid(conn)
                kind, payload = wire.recv(conn, limit=MAX_REQUEST)
                if kind != wire.REQUEST:
                    return
                conn.settimeout(60.0)
                answer = self.handler(uid, wire.loads(payload))
                wire.send_json(conn, wire.DATA, {"door": DOOR_PROTOCOL, **answer})
            except (wire.WireError, OSError) as exc:
                log.debug("approval door request failed: %s", exc)
            except Exception:
                log.exception("approval door handler failed")
                with contextlib.suppress(OSError):
                    failed = {"code": "INTERNAL_ERROR", "hint": "", "details": {},
                              "message": "the approval door failed (the server's log has the cause)"}
                    wire.send_json(conn, wire.DATA, {"door": DOOR_PROTOCOL, "error": failed})


def _unlink_stale(path: str) -> None:
    """Remove a socket file nobody listens on (a crashed server's); one somebody answers on stays theirs."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with probe:
        try:
            probe.connect(path)
        except FileNotFoundError:
            return
        except ConnectionRefusedError:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
    raise OSError(errno.EADDRINUSE, "another server listens on it", path)


def knock(uid: int, request: dict[str, Any], timeout_s: float = 60.0) -> dict[str, Any]:
    """Send one request to the door of the server running as ``uid`` and return its answer, following
    the shared door's word to another server of ``uid`` (once; that door is checked the same way).

    ``ConnectionError`` when nobody answers, ``PermissionError`` when whoever answers is not ``uid``.
    """
    answer = knock_address(door_address(uid), uid, request, timeout_s)
    redirect = answer.get("redirect")
    if isinstance(redirect, str):
        if not re.fullmatch(rf"@canal-approvals-{uid}-[0-9a-f]{{16}}", redirect):
            msg = f"the approval door of uid {uid} sent us to {redirect!r}, not a door of that user"
            raise PermissionError(msg)
        answer = knock_address("\0" + redirect[1:], uid, request, timeout_s)
    return answer


def knock_address(address: str, uid: int, request: dict[str, Any], timeout_s: float = 60.0) -> dict[str, Any]:
    """One request to the door at ``address``, which must be held by ``uid``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    with sock:
        try:
            sock.connect(address)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            msg = f"nobody answers on {shown(address)}"
            raise ConnectionError(msg) from exc
        _pid, server_uid = wire.peer_uid(sock)
        if server_uid != uid:
            msg = f"{shown(address)} is held by uid {server_uid}, not by uid {uid}: refused to talk to it"
            raise PermissionError(msg)
        wire.send_json(sock, wire.REQUEST, {"door": DOOR_PROTOCOL, **request})
        return wire.recv_json(sock, wire.DATA)
