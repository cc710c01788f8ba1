"""``[ADDRESS:]HOSTPORT:PORT``: what a forward listens on (the host's loopback only) and where it goes
(PORT on the sandbox's own loopback). ``PORT`` alone uses the same number on both sides; HOSTPORT 0
lets the system pick a free port."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from canal.core.next import act
from canal.runtime.sandboxes.forward.errors import FORWARD_ADDRESS_REFUSED, FORWARD_SPEC_INVALID

LOOPBACK_NAMES = {"localhost": "127.0.0.1", "ip6-localhost": "::1"}
_SPEC = re.compile(r"^(?:(?P<addr>\[[^\]]*\]|[^:\[\]]*[^:\[\]\d][^:\[\]]*|\d+\.[\d.]+):)?"
                   r"(?:(?P<host>\d+):)?(?P<port>\d+)$")


@dataclass(frozen=True)
class ForwardSpec:
    address: str  # a loopback address of the host: 127.0.0.1 (or another 127.x) or ::1
    host_port: int  # 0: any free port
    port: int  # the port inside the sandbox

    @property
    def listen(self) -> str:
        return endpoint(self.address, self.host_port)


def endpoint(address: str, port: int) -> str:
    """``127.0.0.1:8080``, ``[::1]:8080``."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def parse_forward(text: str) -> ForwardSpec:
    """``8080:8000``, ``8000``, ``127.0.0.1:8080:8000``, ``[::1]:8080:8000``; ``FORWARD_ADDRESS_REFUSED`` for
    an address that is not the host's loopback, ``FORWARD_SPEC_INVALID`` for anything else malformed."""
    match = _SPEC.match(text.strip())
    if match is None:
        msg = f"Not a forward: {text!r}. Write HOSTPORT:PORT (8080:8000), PORT, or 127.0.0.1:HOSTPORT:PORT."
        raise FORWARD_SPEC_INVALID(msg, next=act("port_forward", spec="8080:8000"), details={"spec": text})
    raw_addr = (match.group("addr") or "127.0.0.1").strip("[]")
    address = _loopback(raw_addr, text)
    port = _port(match.group("port"), text, allow_zero=False)
    host = _port(match.group("host"), text, allow_zero=True) if match.group("host") else port
    return ForwardSpec(address, host, port)


def _loopback(raw: str, text: str) -> str:
    address = LOOPBACK_NAMES.get(raw.lower(), raw)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        ip = None
    if ip is None or not ip.is_loopback:
        msg = (f"Refused to listen on {raw!r} ({text!r}): a forward listens on the host's loopback only "
               "(127.0.0.1 or ::1), so nothing outside this machine can reach the sandbox through it.")
        raise FORWARD_ADDRESS_REFUSED(msg, hint="drop the address",
                                    next=act("port_forward", spec="HOSTPORT:PORT"),
                                    details={"spec": text, "address": raw})
    return str(ip)


def _port(value: str, text: str, *, allow_zero: bool) -> int:
    number = int(value)
    if not (0 if allow_zero else 1) <= number <= 65535:
        msg = f"Port {value} in {text!r} is out of range (1 to 65535; a host port of 0 picks a free one)."
        raise FORWARD_SPEC_INVALID(msg, next=act("port_forward", spec="8080:8000"), details={"spec": text})
    return number
