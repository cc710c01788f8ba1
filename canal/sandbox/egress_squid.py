"""What runs in the egress proxy container, and what it reports: squid's configuration for an allowlist,
and the log lines of squid (one per HTTP request or CONNECT) and of the refusing resolver (one per DNS
query) parsed into ``EgressAttempt``.

squid decides by the request's host and port: the host of an HTTP request's absolute URL (never its
``Host:`` header) or of ``CONNECT host:port``. Names are never resolved for a request that no entry
allows (a lookup would carry the name to the outside: a DNS side channel), and an allowed name that
resolves to loopback, link-local (cloud metadata), or an address of the host or of an engine network
(``egress_hosts``) is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict

from canal.sandbox.egress import AllowEntry
from canal.sandbox.egress_hosts import collapsed
from canal.sandbox.egress_upstream import Upstream

ERROR_DENIED = "ERR_CANAL_DENIED"
ERROR_BLOCKED = "ERR_CANAL_BLOCKED"
ERROR_DIRECTORY = "/etc/squid/canal-errors"
BLOCKED_DESTINATIONS = ("127.0.0.0/8", "0.0.0.0/8", "169.254.0.0/16", "::1", "fe80::/10")
ACCESS_PREFIX = "CANAL"
_DNS_QUERY = re.compile(r"query\[(?P<type>[A-Za-z0-9]+)\] (?P<name>.+) from (?P<client>[0-9a-fA-F.:]+)\s*$")


def squid_conf(allow: Sequence[AllowEntry], *, port: int, sandboxes: str,
               blocked: Sequence[str] = (), upstream: Upstream | None = None) -> str:
    """squid.conf: requests from ``sandboxes`` (a subnet) to an allowed host and port, nothing else;
    ``blocked`` destinations (besides loopback and link-local: the host's and the engine's, from
    ``egress_hosts``) refused even for an allowed name. With an ``upstream`` proxy every allowed request
    goes to it and squid looks nothing up (``egress_upstream``)."""
    lines = [
        f"http_port {port}",
        "pid_filename none",
        "cache deny all",
        "cache_mem 0 MB",
        "coredump_dir /tmp",
        "cache_log stdio:/dev/stderr",
        "logfile_rotate 0",
        "forwarded_for delete",
        "via off",
        "httpd_suppress_version_string on",
        "visible_hostname canal-egress",
        f"error_directory {ERROR_DIRECTORY}",
        # one line per attempt; %#>rd: the host URL-escaped, so a line always splits into 10 fields
        f"logformat canal {ACCESS_PREFIX} %ts.%03tu %>a %rm %#>rd %>rP %Ss %>Hs %>st %<st",
        "access_log stdio:/dev/stdout canal",
        f"acl sandboxes src {sandboxes}",
        f"acl canal_blocked dst {' '.join(collapsed((*BLOCKED_DESTINATIONS, *blocked)))}",
        "acl CONNECT method CONNECT",
        "acl canal_proto proto HTTP HTTPS",  # no FTP, gopher, whois or cache_object through the gateway
        "http_access deny !sandboxes",
        "http_access deny manager",
        "http_access deny !CONNECT !canal_proto",
        f"deny_info {ERROR_BLOCKED} canal_blocked",
    ]
    for index, entry in enumerate(allow):
        lines += _entry_lines(f"allow{index}", entry, checked=upstream is None)
    lines += [f"deny_info {ERROR_DENIED} all", "http_access deny all"]
    if upstream is not None:
        lines += upstream.squid_lines()
    return "\n".join(lines) + "\n"


def _entry_lines(name: str, entry: AllowEntry, *, checked: bool = True) -> list[str]:
    if entry.host == "*":
        host = f"acl {name}_host dstdom_regex -n ."
    elif entry.host.startswith("*."):
        stars = entry.host.count("*.")
        suffix = re.escape(entry.host[2 * stars:])
        host = f"acl {name}_host dstdom_regex -n -i ^([a-z0-9-]+\\.){{{stars}}}{suffix}$"
    else:  # a name, or an IP literal a request must name as such (-n: never a lookup to match)
        host = f"acl {name}_host dstdomain -n {entry.host}"
    # the dst check (a lookup) runs only once host and port matched: ACLs on a line short-circuit
    # (no lookup at all when an upstream proxy resolves: it decides what its network's addresses reach)
    check = [f"http_access deny {name}_host {name}_port canal_blocked"] if checked else []
    return [host, f"acl {name}_port port {' '.join(str(p) for p in entry.ports)}", *check,
            f"http_access allow {name}_host {name}_port"]


Kind = Literal["http", "connect", "dns"]


@dataclass(frozen=True)
class ProxyState:
    """One egress proxy as the engine reports it (for ``canal doctor``)."""

    name: str
    running: bool
    status: str
    sandboxes: int  # containers created behind it that still exist


class EgressAttempt(BaseModel):
    """One attempt to leave a sandbox that the proxy saw: a request, a CONNECT or a DNS query."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: float  # Unix time, from the engine's timestamp of the log line
    client: str  # the sandbox's address on the internal network
    kind: Kind
    method: str  # GET, CONNECT..., or the DNS query type (A, AAAA...)
    host: str
    port: int | None
    allowed: bool
    status: str  # squid's result code (TCP_DENIED...) or, for DNS, "refused"
    http_status: int = 0
    bytes_sent: int = 0  # from the sandbox to the proxy
    bytes_received: int = 0  # from the proxy to the sandbox
    sandbox: str | None = None  # the container at ``client`` when the line was read

    @property
    def destination(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"


def parse_access_line(line: str, at: float) -> EgressAttempt | None:
    """``CANAL <time> <client> <method> <host> <port> <status> <http> <in> <out>``; None if not one."""
    parts = line.split()
    if len(parts) != 10 or parts[0] != ACCESS_PREFIX:
        return None
    try:
        status, http = parts[6], int(parts[7])
        return EgressAttempt(at=at, client=parts[2], kind="connect" if parts[3] == "CONNECT" else "http",
                             method=parts[3], host=unquote(parts[4]),
                             port=int(parts[5]) if parts[5].isdigit() else None,
                             allowed=not status.endswith("_DENIED") and http != 403,
                             status=status, http_status=http, bytes_sent=int(parts[8]),
                             bytes_received=int(parts[9]))
    except ValueError:
        return None


def parse_dns_line(line: str, at: float) -> EgressAttempt | None:
    """dnsmasq's ``query[A] NAME from CLIENT``: a lookup the sandbox tried (every one is refused)."""
    found = _DNS_QUERY.search(line)
    if found is None:
        return None
    return EgressAttempt(at=at, client=found["client"], kind="dns", method=found["type"], host=found["name"],
                         port=None, allowed=False, status="refused")


EgressRead = tuple[list[EgressAttempt], dict[str, int]]  # attempts, and the cursors after them
