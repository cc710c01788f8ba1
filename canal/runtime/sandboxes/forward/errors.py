"""Errors of forwarded ports."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class ForwardError(CanalError):
    code = "FORWARD_ERROR"


FORWARD_SPEC_INVALID = register(ForwardError, "FORWARD_SPEC_INVALID", """
    A forward is written ``[127.0.0.1:]HOSTPORT:PORT`` with ports from 1 to 65535 (HOSTPORT 0: any).
    """, exit_code=ExitCode.USAGE)

FORWARD_ADDRESS_REFUSED = register(ForwardError, "FORWARD_ADDRESS_REFUSED", """
    A forward listens on the host's loopback only: any other address is refused.
    """, exit_code=ExitCode.USAGE)

FORWARD_PORT_IN_USE = register(ForwardError, "FORWARD_PORT_IN_USE", """
    Something on the host already listens on that port.
    """)
