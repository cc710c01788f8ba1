"""Errors of the server and its thin client (standard library only, like the client)."""

from __future__ import annotations

from canal.core.errors import CanalError, register


class ServerError(CanalError):
    """Root of the server's and the thin client's errors."""

    code = "SERVER_ERROR"


RUNTIME_DIR_UNSAFE = register(ServerError, "RUNTIME_DIR_UNSAFE", """
    The server's runtime folder (or its socket) belongs to another user or is open to others: refused.
    """)

SERVER_START_FAILED = register(ServerError, "SERVER_START_FAILED", """
    The Canal server could not be started, or did not answer in time.
    """)

SERVER_LOST = register(ServerError, "SERVER_LOST", """
    The Canal server stopped while it handled this call (the audit log keeps what it started).
    """)

SERVER_PEER_REFUSED = register(ServerError, "SERVER_PEER_REFUSED", """
    A process of another user connected to the server: it serves its own user only. Nothing ran.
    """)
