"""Errors of the web console: each refused request has its own code, shown in the page's ``#error``
and recorded in the audit log (``console.refused``)."""

from __future__ import annotations

from typing import ClassVar

from canal.core.errors import CanalError, ExitCode, register


class ConsoleError(CanalError):
    """The web console refused a request."""

    code = "CONSOLE_REFUSED"
    exit_code = ExitCode.CANAL_ERROR
    status: ClassVar[int] = 403  # the HTTP status of the refusal


CONSOLE_PEER_REFUSED = register(ConsoleError, "CONSOLE_PEER_REFUSED", """
    A request from an address that is not loopback (the console serves 127.0.0.1 only).
    """)


class ConsoleHostRefusedError(ConsoleError):
    """A request whose Host header is not localhost:PORT or 127.0.0.1:PORT (DNS rebinding)."""

    code = "CONSOLE_HOST_REFUSED"
    status = 421


CONSOLE_ORIGIN_REFUSED = register(ConsoleError, "CONSOLE_ORIGIN_REFUSED", """
    A POST whose Origin is not the console's own (http://localhost:PORT), or that names none.
    """)


class ConsoleSessionMissingError(ConsoleError):
    """A POST without a live console session (no cookie, an unknown or expired one), or not logged in."""

    code = "CONSOLE_SESSION_MISSING"
    status = 401


CONSOLE_CSRF_INVALID = register(ConsoleError, "CONSOLE_CSRF_INVALID", """
    A POST whose CSRF token is missing or is not its session's.
    """)


class ConsoleBadRequestError(ConsoleError):
    """A console request that is not what its page sends (malformed JSON, a missing field)."""

    code = "CONSOLE_BAD_REQUEST"
    status = 400


CONSOLE_PORT_BUSY = register(ConsoleError, "CONSOLE_PORT_BUSY", """
    The console's port (approvals.console.port) is taken by another program or project.
    """)
