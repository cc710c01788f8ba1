"""Who is at the other end of a loopback TCP connection: the uid that owns the client's socket, from
the kernel's socket table (``/proc/net/tcp``, ``/proc/net/tcp6``), as identd answers it.

A forwarded port listens on the host's loopback, which every local user can reach; the forwarder
accepts only connections whose client socket belongs to the user running Canal (fail closed: a
client that cannot be found in the table is refused).
"""

from __future__ import annotations

import socket
import struct

TABLES = {socket.AF_INET: "/proc/net/tcp", socket.AF_INET6: "/proc/net/tcp6"}


def _hex_endpoint(family: int, address: str, port: int) -> str:
    """An endpoint as the kernel prints it: the address as native-order 32-bit words, then the port."""
    raw = socket.inet_pton(family, address)
    words = struct.unpack(f"={len(raw) // 4}I", raw)
    return "".join(f"{w:08X}" for w in words) + f":{port:04X}"


def peer_uid(conn: socket.socket) -> int | None:
    """The uid owning the client end of ``conn`` (an accepted loopback connection); None when the table
    has no such socket."""
    family = conn.family
    client = conn.getpeername()
    server = conn.getsockname()
    local = _hex_endpoint(family, client[0], client[1])
    remote = _hex_endpoint(family, server[0], server[1])
    try:
        with open(TABLES[family]) as fh:
            next(fh, None)
            for line in fh:
                fields = line.split()
                if len(fields) > 7 and fields[1] == local and fields[2] == remote:
                    return int(fields[7])
    except (OSError, KeyError, ValueError):
        return None
    return None
