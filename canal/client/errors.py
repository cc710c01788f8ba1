"""Errors of the server and its thin client (standard library only, like the client)."""

from __future__ import annotations

from canal.core.errors import CanalError


class ServerError(CanalError):
    """Root of the server's and the thin client's errors."""

    code = "SERVER_ERROR"


class RuntimeDirUnsafe(ServerError):
    """The server's runtime folder (or its socket) belongs to another user or is open to others: refused."""

    code = "RUNTIME_DIR_UNSAFE"


class ServerStartFailed(ServerError):
    """The Canal server could not be started, or did not answer in time."""

    code = "SERVER_START_FAILED"


class ServerLost(ServerError):
    """The Canal server stopped while it handled this call (the audit log keeps what it started)."""

    code = "SERVER_LOST"


class ServerPeerRefused(ServerError):
    """A process of another user connected to the server: it serves its own user only. Nothing ran."""

    code = "SERVER_PEER_REFUSED"
