"""An allowed name that resolves to the host or to an engine network is refused by the egress proxy:
the docker0 gateway, another bridge's gateway, another network's containers, the host's own addresses
(computed when the proxy starts, v4 and v6).

The test maps ``*.canal.test`` names in the proxy's hosts file. Its only traffic goes to a listener on
the gateway of a bridge network the test creates (a host address: what the proxy must never reach); the
docker0 gateway and the host's other addresses are checked in the proxy's configuration, never sent to.
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from egress_world import remove_egress

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.egress import EgressProxies
from canal.sandbox.docker.image import build_egress_image
from canal.sandbox.spec import SandboxSpec

GATEWAY, PEER = "gw.canal.test", "peer.canal.test"


class MappedBackend(DockerBackend):
    """A Docker backend whose egress proxies resolve ``hosts`` from their hosts file."""

    hosts: dict[str, str]

    @property
    def egress(self) -> EgressProxies:
        return EgressProxies(self.client, self.owner, self.egress_image, hosts=self.hosts)


@dataclass
class HostWorld:
    backend: MappedBackend
    sandbox: str
    gateway: str
    port: int
    served: list[bytes]

    def curl(self, host: str) -> str:
        result = self.backend.exec(self.sandbox, f"curl -s -m 5 http://{host}:{self.port}/", timeout_s=30)
        return result.stdout.read_bytes().decode(errors="replace")


def listener(address: str, served: list[bytes]) -> tuple[socket.socket, threading.Thread]:
    """A host service on ``address`` (a gateway of the test's own network): it answers and remembers."""
    sock = socket.create_server((address, 0))
    sock.settimeout(60)

    def serve() -> None:
        for _ in range(5):  # bounded: a few connections at most
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                served.append(conn.recv(4096))
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 13\r\n\r\nhost-service\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return sock, thread


@pytest.fixture(scope="module")
def host_world(docker_client: Any, sandbox_image: str) -> Iterator[HostWorld]:
    build_egress_image(docker_client)
    tag = uuid.uuid4().hex[:8]
    network = docker_client.networks.create(f"canal-test-hostedge-{tag}", driver="bridge",
                                            labels={"canal.test": "egress"})
    network.reload()
    config = network.attrs["IPAM"]["Config"][0]
    gateway = config["Gateway"]
    peer = str(ipaddress.ip_network(config["Subnet"]).network_address + 10)  # nothing there
    served: list[bytes] = []
    sock, thread = listener(gateway, served)
    port = sock.getsockname()[1]
    owner = f"canal-test-eg-{tag}"
    backend = MappedBackend(docker_client, owner=owner)
    backend.hosts = {GATEWAY: gateway, PEER: peer}
    name = f"canal-t-{tag}"
    spec = SandboxSpec(image=sandbox_image, network={"mode": "allowlist",  # type: ignore[arg-type]
                                                     "allow": [f"{GATEWAY}:{port}", f"{PEER}:{port}"]})
    try:
        backend.create(name, spec)
        yield HostWorld(backend, name, gateway, port, served)
    finally:
        sock.close()
        thread.join(5)
        backend.remove(name)
        remove_egress(docker_client, owner)
        backend.close()
        network.remove()


def refused(world: HostWorld, host: str) -> list[Any]:
    """The proxy's refusals of ``host``; squid writes its log line after the answer, so a loaded
    machine may need a moment (bounded: 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        attempts, _ = world.backend.egress_read({})
        found = [a for a in attempts if a.host == host and not a.allowed]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_an_allowed_name_on_another_bridges_gateway_is_refused_and_logged(host_world: HostWorld) -> None:
    output = host_world.curl(GATEWAY)
    # first whether anything reached the host (the promise), then how the proxy said no: a run under
    # the whole suite once got squid's ERR_READ_ERROR page here instead of the refusal, and which of
    # the two it was could not be told
    assert host_world.served == [], f"the proxy connected to the host's address: {output}"
    assert "host-service" not in output
    assert f"CANAL_EGRESS_BLOCKED: {GATEWAY}" in output, output
    [attempt] = refused(host_world, GATEWAY)
    assert (attempt.port, attempt.http_status) == (host_world.port, 403)


def test_an_allowed_name_on_another_engine_networks_subnet_is_refused(host_world: HostWorld) -> None:
    output = host_world.curl(PEER)
    assert f"CANAL_EGRESS_BLOCKED: {PEER}" in output, output
    assert refused(host_world, PEER)


def blocked_networks(docker_client: Any, owner: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    [proxy] = docker_client.containers.list(filters={"label": f"canal.egress={owner}"})
    env = dict(e.split("=", 1) for e in proxy.attrs["Config"]["Env"])
    [line] = [ln for ln in env["CANAL_SQUID_CONF"].splitlines() if ln.startswith("acl canal_blocked dst ")]
    return [ipaddress.ip_network(word, strict=False) for word in line.split()[3:]]


def host_addresses() -> list[str]:
    out = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3].split("/")[0] for line in out.splitlines()]


def test_the_docker0_gateway_and_every_host_address_are_refused(host_world: HostWorld,
                                                                docker_client: Any) -> None:
    blocked = blocked_networks(docker_client, host_world.backend.owner)
    bridge = docker_client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    docker0 = bridge.get("Gateway") or str(ipaddress.ip_network(bridge["Subnet"]).network_address + 1)
    wanted = [docker0, host_world.gateway, *host_addresses()]
    assert wanted, "no host address was found"
    for address in wanted:
        ip = ipaddress.ip_address(address)
        assert any(ip in net for net in blocked if net.version == ip.version), (address, blocked)
