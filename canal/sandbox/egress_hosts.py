"""The addresses an egress proxy never connects to, whatever name resolves there: the host's and the
engine's own, computed when a proxy starts (from the engine's networks, as ``egress_docker`` lists
them: no engine client here, this part of sandbox stays engine-neutral).

- every address of the host's interfaces (Linux: ``/proc/net/fib_trie`` and ``/proc/net/if_inet6``), v4
  and v6: a name resolving to docker0, the LAN address or a VPN address would reach host services;
- every engine network's gateway (or, when the engine names none, its subnet's first address, as Docker
  assigns it): the host's side of each bridge;
- every engine network's subnet but the route's own two (its internal network and the outer bridge the
  proxy leaves by): other projects' sandboxes and proxies, the default bridge's containers.

On top of the fixed list (loopback, link-local, ``0.0.0.0/8``). The list is collapsed, so squid gets no
overlapping entries. When the engine runs on another machine the interface addresses read here are the
client's, and the engine host's own LAN address is not known: its networks' gateways still are.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FIB_TRIE = Path("/proc/net/fib_trie")
IF_INET6 = Path("/proc/net/if_inet6")


def refused_destinations(networks: Iterable[Mapping[str, Any]], own: Collection[str],
                         host: Iterable[Network] | None = None) -> list[str]:
    """squid ``dst`` entries: the host's addresses (``host``, else read now), the gateway of each of the
    engine's ``networks`` (as its API lists them), and the subnets of those not named in ``own``."""
    found = [*(host_networks() if host is None else host), *engine_networks(networks, own)]
    return [_entry(n) for n in collapse(found)]


def collapsed(entries: Iterable[str]) -> list[str]:
    """squid ``dst`` entries with none inside another (squid warns about each such pair); an entry that
    is not an address or network is kept as it is, for squid to refuse at start (fail closed)."""
    networks: list[Network] = []
    odd: list[str] = []
    for entry in entries:
        network = _network(entry)
        if network is None:
            odd.append(entry)
        else:
            networks.append(network)
    return [*(_entry(n) for n in collapse(networks)), *odd]


def host_networks(fib_trie: Path = FIB_TRIE, if_inet6: Path = IF_INET6) -> list[Network]:
    return [ipaddress.ip_network(a) for a in (*_local_v4(_read(fib_trie)), *_local_v6(_read(if_inet6)))]


def engine_networks(networks: Iterable[Mapping[str, Any]], own: Collection[str]) -> list[Network]:
    found: list[Network] = []
    for network in networks:
        for config in (network.get("IPAM") or {}).get("Config") or []:
            found += _of_config(config, keep_subnet=network.get("Name") in own)
    return found


def _of_config(config: Mapping[str, Any], *, keep_subnet: bool) -> list[Network]:
    found: list[Network] = []
    subnet = _network(config.get("Subnet"))
    gateway = _network(config.get("Gateway"))
    if gateway is None and subnet is not None and subnet.num_addresses > 1:
        gateway = ipaddress.ip_network(subnet.network_address + 1)
    if gateway is not None:
        found.append(gateway)
    if subnet is not None and not keep_subnet:
        found.append(subnet)
    return found


def collapse(networks: Iterable[Network]) -> list[Network]:
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    return [*ipaddress.collapse_addresses(v4), *ipaddress.collapse_addresses(v6)]


def _entry(network: Network) -> str:
    single = network.num_addresses == 1
    return str(network.network_address) if single else network.with_prefixlen


def _network(text: object) -> Network | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return ipaddress.ip_network(text.split("%")[0], strict=False)
    except ValueError:
        return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:  # not Linux, or no /proc: the engine's gateways are still refused
        return ""


def _local_v4(fib_trie: str) -> Iterator[str]:
    """``|-- 172.17.0.1`` followed by ``/32 host LOCAL``: an address of one of the host's interfaces."""
    last = ""
    for line in fib_trie.splitlines():
        words = line.split()
        if words[:1] == ["|--"] and len(words) == 2:
            last = words[1]
        elif last and words[:1] == ["/32"] and "LOCAL" in words:
            yield last


def _local_v6(if_inet6: str) -> Iterator[str]:
    """Each line starts with the address as 32 hex digits."""
    for line in if_inet6.splitlines():
        digits = line.split()[0] if line.split() else ""
        if len(digits) == 32:
            with_colons = ":".join(digits[i:i + 4] for i in range(0, 32, 4))
            yield str(ipaddress.ip_address(with_colons))
