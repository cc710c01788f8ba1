"""The egress proxies of one owner's sandboxes: per allowlist, an internal network and a proxy container.

A *route* is one allowlist of one owner (a project): ``<owner>-egress-<id>-in`` is an ``--internal``
network with no address on the host's side of its bridge (``inhibit_ipv4``), and the container
``<owner>-egress-<id>`` (squid and a refusing resolver, see ``egress_squid``) sits on it and on
``<owner>-egress-out``, an ordinary bridge: the only way out. A sandbox on the internal network reaches
the proxy, the sandboxes of the same allowlist, and nothing else: not the internet, not the host. Its
resolver forwards to the proxy's address, where every query is refused and logged.

A sandbox keeps the route it was created with, as it keeps every other setting; a changed allowlist
gets a route of its own for the sandboxes created after the change. ``prune`` removes the routes no
sandbox uses any more. Everything here is labelled ``canal.egress=<owner>`` so only our own is touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import docker
import docker.errors
from docker.types import LogConfig

from canal.core.next import act
from canal.sandbox.backend import LABEL_OWNER
from canal.sandbox.docker.errors import translating
from canal.sandbox.egress import AllowEntry
from canal.sandbox.egress_hosts import refused_destinations
from canal.sandbox.egress_squid import (
    ACCESS_PREFIX,
    EgressAttempt,
    ProxyState,
    parse_access_line,
    parse_dns_line,
    squid_conf,
)
from canal.sandbox.egress_upstream import Upstream
from canal.sandbox.errors import EGRESS_PROXY_FAILED, SandboxError, SandboxExists
from canal.sandbox.images import EGRESS_IMAGE

LABEL_EGRESS = "canal.egress"  # owner, on proxies and their networks
LABEL_ROUTE = "canal.egress.route"  # the proxy container's name, on the proxy and its sandboxes
PROXY_PORT = 3128
READY = ("Accepting HTTP Socket connections",)
START_TIMEOUT_S = 20.0
TAIL_FIRST = 200  # lines read from the end of the proxy's log first; most commands log fewer
TAIL_ALL_AFTER = 20_000
# Log lines kept by the engine between two reads (Canal reads them after every command).
PROXY_LOG = LogConfig(type="json-file", config={"max-size": "10m", "max-file": "3"})


@dataclass(frozen=True)
class EgressRoute:
    """What a sandbox needs to use its proxy: the network to join, the proxy's address, the label."""

    proxy: str
    network: str
    proxy_ip: str

    @property
    def proxy_url(self) -> str:
        return f"http://{self.proxy_ip}:{PROXY_PORT}"

    def env(self) -> dict[str, str]:
        """The proxy for every tool that reads the usual variables (curl, git, pip, npm, apt, wget,
        Python's urllib, Node's undici through npm's settings)."""
        url, local = self.proxy_url, "localhost,127.0.0.1,::1"
        return {"HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url,
                "NO_PROXY": local, "no_proxy": local, "npm_config_proxy": url,
                "npm_config_https_proxy": url, "PIP_PROXY": url}


def route_id(allow: Sequence[AllowEntry], upstream: Upstream | None = None) -> str:
    """The allowlist's (and, when there is one, the upstream proxy's address: never its credentials)."""
    entries: list[Any] = [e.model_dump(mode="json") for e in allow]
    if upstream is not None:
        entries.append({"upstream": upstream.url(with_credentials=False)})
    body = json.dumps(entries, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()[:12]


class EgressProxies:
    """The routes of ``owner`` on one engine."""

    def __init__(self, client: docker.DockerClient, owner: str, image: str = EGRESS_IMAGE,
                 hosts: Mapping[str, str] | None = None) -> None:
        self.client = client
        self.owner = owner
        self.image = image
        self.outer = f"{owner}-egress-out"
        # names the proxy resolves from its own hosts file before DNS (tests map *.canal.test names)
        self.hosts = dict(hosts or {})

    def names(self, allow: Sequence[AllowEntry], upstream: Upstream | None = None) -> tuple[str, str]:
        """(proxy container, internal network) for ``allow``."""
        proxy = f"{self.owner}-egress-{route_id(allow, upstream)}"
        return proxy, f"{proxy}-in"

    def _labels(self) -> dict[str, str]:
        return {LABEL_EGRESS: self.owner, LABEL_OWNER: self.owner}

    # -- starting --------------------------------------------------------------------------------
    def ensure(self, allow: Sequence[AllowEntry], upstream: Upstream | None = None) -> EgressRoute:
        """The running proxy for ``allow`` (going out through ``upstream``), started if needed. Fails
        closed: ``EGRESS_PROXY_FAILED``, and nothing half-started is left behind."""
        proxy, inner = self.names(allow, upstream)
        current = self._proxy(proxy)
        if current is not None and current.status == "running":
            return self._route(current, inner)
        try:
            if current is not None:  # stopped or dead: its sandboxes have no way out anyway
                self._remove_container(current)
            return self._start(proxy, inner, allow, upstream)
        except SandboxExists:  # another process started it meanwhile
            return self._await_other(proxy, inner)
        except SandboxError as exc:
            with contextlib.suppress(SandboxError):
                self._remove_container(self._proxy(proxy))
            msg = f"The egress proxy {proxy} did not start: {exc.message} No sandbox was started."
            doctor = act("doctor", "checks the egress image and proxies; then retry")
            raise EGRESS_PROXY_FAILED(msg, next=doctor, details={"proxy": proxy, "cause": exc.code}) from exc

    def _start(self, proxy: str, inner_name: str, allow: Sequence[AllowEntry],
               upstream: Upstream | None) -> EgressRoute:
        with translating("find the image for", name=proxy):
            self.client.images.get(self.image)  # never pulled: no registry may be reachable
        inner = self._network(inner_name, internal=True, route=proxy)
        outer = self._network(self.outer, internal=False, route=None)
        with translating("list the engine's networks"):
            networks = self.client.api.networks()
        refused = refused_destinations(networks, own=(inner.name, outer.name))
        conf = squid_conf(allow, port=PROXY_PORT, sandboxes=_ipam(inner, "Subnet"), blocked=refused,
                          upstream=upstream)
        with translating("create", name=proxy):
            container = self.client.containers.run(
                self.image, name=proxy, detach=True, network=outer.name, init=True,
                environment={"CANAL_SQUID_CONF": conf}, labels={**self._labels(), LABEL_ROUTE: proxy},
                read_only=True, tmpfs={"/tmp": "rw,size=16m", "/var/spool/squid": "rw,size=16m",
                                       "/var/log/squid": "rw,size=16m", "/run": "rw,size=1m"},
                cap_drop=["ALL"], security_opt=["no-new-privileges"], mem_limit=256 * 1024**2,
                pids_limit=128, log_config=PROXY_LOG, extra_hosts=self.hosts or None,
                # the refusing resolver answers on port 53 as an unprivileged user
                sysctls={"net.ipv4.ip_unprivileged_port_start": "0"})
        with translating("connect the proxy to", name=inner_name):
            inner.connect(container)
        self._wait_ready(container)
        return self._route(container, inner_name)

    def _await_other(self, proxy: str, inner: str) -> EgressRoute:
        container = self._proxy(proxy)
        if container is None:
            msg = f"The egress proxy {proxy} was started and removed by another process; nothing was started."
            raise EGRESS_PROXY_FAILED(msg, hint="retry", details={"proxy": proxy})
        deadline = time.monotonic() + START_TIMEOUT_S
        while inner not in _networks(container) and time.monotonic() < deadline:
            time.sleep(0.1)
            container.reload()
        self._wait_ready(container)
        return self._route(container, inner)

    def _wait_ready(self, container: Any) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            container.reload()
            if container.status != "running":
                break
            log = container.logs(stdout=False, stderr=True).decode(errors="replace")
            if all(line in log for line in READY):
                return
            time.sleep(0.05)
        tail = container.logs(stdout=False, stderr=True).decode(errors="replace").splitlines()[-5:]
        msg = f"the proxy is {container.status} and not accepting connections; its last lines: {tail}"
        raise SandboxError(msg)

    def _route(self, container: Any, inner: str) -> EgressRoute:
        address = _networks(container).get(inner, {}).get("IPAddress")
        if not address:
            msg = f"the proxy {container.name} has no address on {inner}"
            raise EGRESS_PROXY_FAILED(msg, next=act("gc", "removes broken proxies; then retry"))
        return EgressRoute(proxy=container.name, network=inner, proxy_ip=address)

    def _network(self, name: str, *, internal: bool, route: str | None) -> Any:
        for attempt in range(2):
            found = self._own_networks(name)
            if found:
                return found[0]
            labels = {**self._labels(), **({LABEL_ROUTE: route} if route else {})}
            options = {"com.docker.network.bridge.inhibit_ipv4": "true"} if internal else {}
            try:
                with translating("create the network", name=name):
                    return self.client.networks.create(name, driver="bridge", internal=internal,
                                                       labels=labels, options=options, check_duplicate=True)
            except SandboxError:
                if attempt:  # not a race with another process: a real failure
                    raise
        raise AssertionError  # pragma: no cover

    def _own_networks(self, name: str) -> list[Any]:
        with translating("find the network", name=name):
            found = self.client.networks.list(names=[name], filters={"label": f"{LABEL_EGRESS}={self.owner}"})
        return [n for n in found if n.name == name]

    def _proxy(self, name: str) -> Any:
        try:
            container = self.client.containers.get(name)
        except docker.errors.NotFound:
            return None
        return container if (container.labels or {}).get(LABEL_EGRESS) == self.owner else None

    def _remove_container(self, container: Any) -> None:
        if container is not None:
            with translating("remove", name=container.name):
                container.remove(force=True)

    # -- reading ---------------------------------------------------------------------------------
    def proxies(self, *, all_owners: bool = False) -> list[Any]:
        label = LABEL_EGRESS if all_owners else f"{LABEL_EGRESS}={self.owner}"
        with translating("list the egress proxies"):
            return list(self.client.containers.list(all=True, filters={"label": [label, LABEL_ROUTE]}))

    def _proxy_ids(self) -> list[tuple[str, str]]:
        """(id, name) of this owner's proxies, from the engine's list alone (no inspect of each)."""
        with translating("list the egress proxies"):
            found = self.client.api.containers(all=True, filters={"label": [f"{LABEL_EGRESS}={self.owner}",
                                                                            LABEL_ROUTE]})
        return [(c["Id"], c["Names"][0].lstrip("/")) for c in found]

    def read(self, cursors: Mapping[str, int]) -> tuple[list[EgressAttempt], dict[str, int]]:
        """Attempts logged since ``cursors`` (proxy container id -> the engine's timestamp, in ns, of the
        last line read there), oldest first, and the cursors after them."""
        attempts: list[EgressAttempt] = []
        after: dict[str, int] = {}
        for proxy_id, name in self._proxy_ids():  # the engine's list, no inspect: this runs per command
            lines, after[proxy_id] = self._read_new(proxy_id, name, cursors.get(proxy_id, 0))
            found = [a for a in (_parse(text, stamp / 1e9) for stamp, text in lines) if a is not None]
            attempts += self._attributed(name, found) if found else []
        return sorted(attempts, key=lambda a: a.at), after

    def _read_new(self, proxy_id: str, name: str, last_ns: int) -> tuple[list[tuple[int, str]], int]:
        """The proxy's stdout lines stamped after ``last_ns``, and the newest stamp seen. Read from the
        end (the engine seeks there; a ``since`` makes it decode the whole file), widening until the
        read reaches back to ``last_ns`` or holds the whole log."""
        tail: int | str = TAIL_FIRST if last_ns else "all"
        while True:
            with translating("read the logs of", name=name):
                raw = self.client.api.logs(proxy_id, stdout=True, stderr=False, timestamps=True, tail=tail)
            lines = list(_lines(raw.decode(errors="replace")))
            if tail == "all" or len(lines) < int(tail) or (lines and lines[0][0] <= last_ns):
                new = [(stamp, text) for stamp, text in lines if stamp > last_ns]
                return new, max([last_ns, *(stamp for stamp, _ in new)])
            tail = int(tail) * 8 if int(tail) < TAIL_ALL_AFTER else "all"

    def _attributed(self, proxy: str, attempts: list[EgressAttempt]) -> list[EgressAttempt]:
        """Each attempt with the name of the sandbox at its client address (when it is still there)."""
        inner = f"{proxy}-in"
        attrs: dict[str, Any] = {}
        with contextlib.suppress(SandboxError), translating("inspect the network", name=inner):
            attrs = self.client.api.inspect_network(inner)  # gone: the attempts stay, unattributed
        by_ip: dict[str, str] = {}
        if (attrs.get("Labels") or {}).get(LABEL_EGRESS) == self.owner:
            for entry in (attrs.get("Containers") or {}).values():
                by_ip[entry.get("IPv4Address", "").split("/")[0]] = entry.get("Name", "")
        return [a.model_copy(update={"sandbox": by_ip.get(a.client)}) for a in attempts]

    def states(self) -> list[ProxyState]:
        used = self._in_use()
        return [ProxyState(c.name, c.status == "running", c.status, used.get(c.name, 0))
                for c in self.proxies()]

    # -- removing --------------------------------------------------------------------------------
    def _in_use(self) -> dict[str, int]:
        with translating("list sandboxes behind egress proxies"):
            found = self.client.containers.list(all=True, filters={"label": LABEL_ROUTE})
        count: dict[str, int] = {}
        for c in found:
            if LABEL_EGRESS not in (c.labels or {}):  # a sandbox, not a proxy
                count[c.labels[LABEL_ROUTE]] = count.get(c.labels[LABEL_ROUTE], 0) + 1
        return count

    def prune(self, *, all_owners: bool = False) -> list[str]:
        """Remove proxies (and their internal networks) that no sandbox uses, then outer networks left
        without a proxy. Returns the proxies removed."""
        used = self._in_use()
        removed = []
        for container in self.proxies(all_owners=all_owners):
            if used.get(container.name):
                continue
            self._remove_container(container)
            removed.append(container.name)
            self._remove_networks(f"{container.name}-in", container.labels.get(LABEL_EGRESS, ""))
        remaining = {c.labels.get(LABEL_EGRESS) for c in self.proxies(all_owners=True)}
        for network in self._networks_of(None if all_owners else self.owner):
            owner = (network.attrs.get("Labels") or {}).get(LABEL_EGRESS, "")
            if network.name == f"{owner}-egress-out" and owner not in remaining:
                self._remove_networks(network.name, owner)
        return removed

    def _networks_of(self, owner: str | None) -> list[Any]:
        label = LABEL_EGRESS if owner is None else f"{LABEL_EGRESS}={owner}"
        with translating("list the egress networks"):
            return list(self.client.networks.list(filters={"label": label}))

    def _remove_networks(self, name: str, owner: str) -> None:
        for network in self._networks_of(owner):
            if network.name == name:  # a network something still uses stays: never an error here
                with contextlib.suppress(SandboxError), translating("remove the network", name=name):
                    network.remove()


def _networks(container: Any) -> dict[str, Any]:
    return dict(container.attrs.get("NetworkSettings", {}).get("Networks") or {})


def _ipam(network: Any, key: str) -> str:
    configs = (network.attrs.get("IPAM") or {}).get("Config") or [{}]
    value = configs[0].get(key)
    if not value:
        msg = f"network {network.name} has no {key}"
        raise SandboxError(msg)
    return str(value)


def _parse(text: str, at: float) -> EgressAttempt | None:
    """squid's access lines start with its prefix; dnsmasq's with a syslog time (never that prefix)."""
    return parse_access_line(text, at) if text.startswith(ACCESS_PREFIX) else parse_dns_line(text, at)


def _lines(raw: str) -> Iterator[tuple[int, str]]:
    """(ns since the epoch, text) of each ``<RFC 3339 nano timestamp> <text>`` line the engine sent."""
    for line in raw.splitlines():
        stamp, _, text = line.partition(" ")
        nanos = _nanos(stamp)
        if nanos is not None:
            yield nanos, text


def _nanos(stamp: str) -> int | None:
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    try:
        seconds = int(datetime.fromisoformat(whole + "+00:00").timestamp())
    except ValueError:
        return None
    digits = (fraction + "000000000")[:9]
    return seconds * 1_000_000_000 + int(digits) if digits.isdigit() else None
