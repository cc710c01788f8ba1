"""Errors of the web console: each refused request has its own code, shown in the page's ``#error``
and recorded in the audit log (``console.refused``)."""

from __future__ import annotations

from typing import ClassVar

from canal.core.errors import CanalError, ExitCode


class ConsoleError(CanalError):
    """The web console refused a request."""

    code: ClassVar[str] = "CONSOLE_REFUSED"
    exit_code: ClassVar[int] = ExitCode.CANAL_ERROR
    status: ClassVar[int] = 403  # the HTTP status of the refusal


class ConsolePeerRefusedError(ConsoleError):
    """A request from an address that is not loopback (the console serves 127.0.0.1 only)."""

    code = "CONSOLE_PEER_REFUSED"


class ConsoleHostRefusedError(ConsoleError):
    """A request whose Host header is not localhost:PORT or 127.0.0.1:PORT (DNS rebinding)."""

    code = "CONSOLE_HOST_REFUSED"
    status = 421


class ConsoleOriginRefusedError(ConsoleError):
    """A POST whose Origin is not the console's own (http://localhost:PORT), or that names none."""

    code = "CONSOLE_ORIGIN_REFUSED"


class ConsoleSessionMissingError(ConsoleError):
    """A POST without a live console session (no cookie, an unknown or expired one), or not logged in."""

    code = "CONSOLE_SESSION_MISSING"
    status = 401


class ConsoleCsrfInvalidError(ConsoleError):
    """A POST whose CSRF token is missing or is not its session's."""

    code = "CONSOLE_CSRF_INVALID"


class ConsoleBadRequestError(ConsoleError):
    """A console request that is not what its page sends (malformed JSON, a missing field)."""

    code = "CONSOLE_BAD_REQUEST"
    status = 400


class ConsolePortBusyError(ConsoleError):
    """The console's port (approvals.console.port) is taken by another program or project."""

    code = "CONSOLE_PORT_BUSY"
