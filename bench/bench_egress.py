"""Benchmark: a request through the egress proxy vs the same request sent directly, to a local server.

Run: python bench/bench_egress.py [--rounds 10] [--requests 50] [--size-mib 64] [--downloads 5]

One HTTP server container sits on the proxy's outer network. Two clients of the same image and
hardening: an allowlist sandbox (through squid: the only way out it has) and a plain container on the
outer network that reaches the server directly. Each round runs one batch on each side, in alternating
order, so both see the same machine load. Latency: a fresh TCP connection per request (as each `curl`
or a tool without connection reuse makes) and one kept-alive connection, measured inside the client;
throughput: one large download.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from benchstats import quantile as pct
from fileserver import file_server  # bench/ is sys.path[0] when a bench runs

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.egress import PROXY_PORT
from canal.sandbox.docker.engine import docker_client
from canal.sandbox.docker.image import DEFAULT_IMAGE, build_egress_image
from canal.sandbox.spec import SandboxSpec

HOST, PORT = "bench.test", 8080
SERVER = file_server(8080)
CLIENT = """
import http.client, json, sys, time
proxy, host, port, count, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
reuse = sys.argv[6] == "reuse"
target = (proxy.split(":")[0], int(proxy.split(":")[1])) if proxy else (host, port)
url = f"http://{host}:{port}{path}" if proxy else path
out = []
conn = http.client.HTTPConnection(*target, timeout=30)
for _ in range(count):
    start = time.perf_counter()
    if not reuse:
        conn = http.client.HTTPConnection(*target, timeout=30)
    conn.request("GET", url, headers={"Host": f"{host}:{port}"})
    resp = conn.getresponse()
    size = 0
    while chunk := resp.read(1 << 20):
        size += len(chunk)
    if not reuse:
        conn.close()
    assert resp.status == 200, resp.status
    out.append((time.perf_counter() - start, size))
print(json.dumps(out))
"""


def batch(run: Callable[[list[str]], bytes], proxy: str, host: str, count: int,
          path: str, reuse: bool = False) -> list[tuple[float, int]]:
    raw = run(["python3", "-c", CLIENT, proxy, host, str(PORT), str(count), path,
               "reuse" if reuse else "new"])
    return [(float(t), int(s)) for t, s in json.loads(raw)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--downloads", type=int, default=5)
    args = parser.parse_args()
    client = docker_client()
    build_egress_image(client)
    owner = f"canal-bench-eg-{uuid.uuid4().hex[:8]}"
    backend = DockerBackend(client, owner=owner)
    box = f"canal-bench-{uuid.uuid4().hex[:8]}"
    made: list[Any] = []
    try:
        network = {"mode": "allowlist", "allow": [f"{HOST}:{PORT}"]}
        spec = SandboxSpec(image=DEFAULT_IMAGE, network=network)  # type: ignore[arg-type]
        backend.create(box, spec)
        outer = backend.egress.outer
        server = client.containers.create(DEFAULT_IMAGE, ["python3", "-c", SERVER, str(args.size_mib)],
                                          user="1000:1000", labels={"canal.bench": owner}, network=outer)
        made.append(server)
        client.api.disconnect_container_from_network(server.id, outer)
        client.api.connect_container_to_network(server.id, outer, aliases=[HOST])
        server.start()
        direct = client.containers.run(DEFAULT_IMAGE, ["sleep", "infinity"], detach=True, network=outer,
                                       user="1000:1000", labels={"canal.bench": owner}, read_only=True,
                                       cap_drop=["ALL"], security_opt=["no-new-privileges"], init=True)
        made.append(direct)
        proxy_ip = _proxy_ip(client, owner)

        def via_proxy(argv: list[str]) -> bytes:
            result = backend.exec(box, argv, timeout_s=600)
            assert result.ok, result.stderr.read_bytes()
            return result.stdout.read_bytes()

        def straight(argv: list[str]) -> bytes:
            code, out = direct.exec_run(argv, demux=True)
            assert code == 0, out
            return bytes(out[0] or b"")

        sides = {"through the egress proxy": (via_proxy, f"{proxy_ip}:{PROXY_PORT}"),
                 "direct (same outer network)": (straight, "")}
        for run, proxy in sides.values():  # warm-up, and the server must be up
            _retry(run, proxy)
        latency: dict[str, list[float]] = {k: [] for k in sides}
        reused: dict[str, list[float]] = {k: [] for k in sides}
        throughput: dict[str, list[float]] = {k: [] for k in sides}
        for i in range(args.rounds):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for label in order:
                run, proxy = sides[label]
                latency[label] += [t for t, _ in batch(run, proxy, HOST, args.requests, "/small")]
                reused[label] += [t for t, _ in batch(run, proxy, HOST, args.requests, "/small", reuse=True)]
        for i in range(args.downloads):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for label in order:
                run, proxy = sides[label]
                (t, size), = batch(run, proxy, HOST, 1, "/large")
                throughput[label].append(size / t / (1 << 20))
        for title, table in (("new connection each", latency), ("one kept-alive connection", reused)):
            print(f"Small request (512 B, {title}), n={args.rounds * args.requests} per side:")
            for label, values in table.items():
                print(f"  {label:<30} p50 {statistics.median(values) * 1000:7.2f} ms   "
                      f"p95 {pct(values, 0.95) * 1000:7.2f} ms   p99 {pct(values, 0.99) * 1000:7.2f} ms")
            base = statistics.median(table["direct (same outer network)"])
            proxied = statistics.median(table["through the egress proxy"])
            print(f"  ratio p50 proxied / direct: {proxied / base:.2f}x")
        print(f"Download of {args.size_mib} MiB, n={args.downloads} per side:")
        for label, values in throughput.items():
            print(f"  {label:<30} median {statistics.median(values):8.1f} MiB/s   "
                  f"min {min(values):8.1f} MiB/s")
    finally:
        for container in made:
            container.remove(force=True)
        backend.remove(box)
        backend.egress_prune()
        backend.close()
        client.close()


def _proxy_ip(client: Any, owner: str) -> str:
    proxy = client.containers.list(filters={"label": f"canal.egress={owner}"})[0]
    inner = next(name for name in proxy.attrs["NetworkSettings"]["Networks"] if name.endswith("-in"))
    return str(proxy.attrs["NetworkSettings"]["Networks"][inner]["IPAddress"])


def _retry(run: Callable[[list[str]], bytes], proxy: str, tries: int = 50) -> None:
    for _ in range(tries - 1):
        try:
            batch(run, proxy, HOST, 3, "/small")
            return
        except AssertionError:
            time.sleep(0.2)
    batch(run, proxy, HOST, 3, "/small")


if __name__ == "__main__":
    main()
