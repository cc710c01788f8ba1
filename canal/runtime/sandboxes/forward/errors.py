"""Errors of forwarded ports."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class ForwardError(CanalError):
    code = "FORWARD_ERROR"


class ForwardSpecInvalid(ForwardError):
    """A forward is written ``[127.0.0.1:]HOSTPORT:PORT`` with ports from 1 to 65535 (HOSTPORT 0: any)."""

    code = "FORWARD_SPEC_INVALID"
    exit_code = ExitCode.USAGE


class ForwardAddressRefused(ForwardError):
    """A forward listens on the host's loopback only: any other address is refused."""

    code = "FORWARD_ADDRESS_REFUSED"
    exit_code = ExitCode.USAGE


class ForwardPortInUse(ForwardError):
    """Something on the host already listens on that port."""

    code = "FORWARD_PORT_IN_USE"
