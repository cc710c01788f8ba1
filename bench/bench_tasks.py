"""Benchmark: background tasks and port forwarding, each side by side with its baseline in the same run.

Run: python bench/bench_tasks.py [--rounds 40] [--requests 200] [--size-mib 64] [--downloads 5]

Everything runs in a temporary runtime folder, state and config (its own Canal server, stopped at the
end), a temporary project, and a Docker network the benchmark creates (removed at the end):

- task start through the server (``Canal.connect(...).tasks.start("true")``: one socket round trip, the
  policy, a checkpoint, the intent record, the session's state, the background agent's fork) against a
  warm foreground ``run("true")`` through the same connection, interleaved (target: start under 50 ms);
  then the same two through the ``canal`` CLI, as a process, for the whole wall time;
- forwarded HTTP: a Python HTTP server as a task in a ``network: none`` sandbox, reached through the
  task's ``--forward`` on the host's loopback, against the same server in a container of the same image
  on a network the benchmark creates, reached through a port Docker publishes on 127.0.0.1. Latency of
  a 512-byte GET (a new connection each, and one kept-alive connection) and the rate of a large download,
  alternating which side goes first each round.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchstats import pct
from fileserver import file_server  # bench/ is sys.path[0] when a bench runs

from canal.sandbox.docker.engine import docker_client
from canal.sandbox.docker.image import DEFAULT_IMAGE, build_default_image

CANAL = str(Path(sys.executable).parent / "canal")
SERVER = file_server(8000)


def row(label: str, samples: list[float]) -> None:
    print(f"  {label:<48} p50 {pct(samples, 0.5):8.2f} ms   p95 {pct(samples, 0.95):8.2f} ms   "
          f"p99 {pct(samples, 0.99):8.2f} ms   (n={len(samples)})")


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# task start ------------------------------------------------------------------------------------
def bench_start(remote: Any, project: Path, env: dict[str, str], rounds: int) -> None:
    starts: list[float] = []
    runs: list[float] = []
    for i in range(rounds):
        order: list[Callable[[], None]] = [lambda: starts.append(_start(remote)),
                                           lambda: runs.append(_run(remote))]
        for step in order if i % 2 == 0 else order[::-1]:
            step()
    print(f"task start vs a foreground command, through the server's socket (load {load()})")
    row("Canal.connect().tasks.start('true')", starts)
    row("Canal.connect().run('true')  (baseline)", runs)
    print(f"  ratio p50: {pct(starts, 0.5) / pct(runs, 0.5):.2f}x")
    cli_start: list[float] = []
    cli_run: list[float] = []
    for i in range(max(5, rounds // 4)):
        pair = [(cli_start, ["task", "start", "--", "true"]), (cli_run, ["run", "--", "true"])]
        for samples, args in pair if i % 2 == 0 else pair[::-1]:
            began = time.perf_counter()
            done = subprocess.run([CANAL, *args], env=env, cwd=project, capture_output=True, check=False)
            samples.append(time.perf_counter() - began)
            if done.returncode != 0:
                raise SystemExit(done.stderr.decode())
        _drain(remote)
    print("the same through the canal CLI (a whole process each)")
    row("canal task start -- true", cli_start)
    row("canal run -- true  (baseline)", cli_run)


def _start(remote: Any) -> float:
    began = time.perf_counter()
    started = remote.tasks.start("true")
    took = time.perf_counter() - began
    if started.task is None:
        raise SystemExit(f"task start failed: {started}")
    remote.tasks.wait(started.task.id, 60)  # not timed: keep under the running-task limit
    return took


def _run(remote: Any) -> float:
    began = time.perf_counter()
    result = remote.run("true")
    took = time.perf_counter() - began
    if result.status != "ok":
        raise SystemExit(result.text)
    return took


def _drain(remote: Any) -> None:
    for record in remote.tasks.list():
        if record.state == "running":
            remote.tasks.wait(record.id, 60)


# forwarding ------------------------------------------------------------------------------------
def latency(address: tuple[str, int], count: int, reuse: bool) -> list[float]:
    out = []
    conn = http.client.HTTPConnection(*address, timeout=30)
    for _ in range(count):
        began = time.perf_counter()
        if not reuse:
            conn = http.client.HTTPConnection(*address, timeout=30)
        conn.request("GET", "/small")
        resp = conn.getresponse()
        body = resp.read()
        out.append(time.perf_counter() - began)
        if len(body) != 512:
            raise SystemExit(f"short answer from {address}: {len(body)} bytes")
        if not reuse:
            conn.close()
    conn.close()
    return out


def download(address: tuple[str, int], size_mib: int) -> float:
    conn = http.client.HTTPConnection(*address, timeout=120)
    began = time.perf_counter()
    conn.request("GET", "/large")
    resp = conn.getresponse()
    size = 0
    while chunk := resp.read(1 << 20):
        size += len(chunk)
    took = time.perf_counter() - began
    conn.close()
    if size != size_mib << 20:
        raise SystemExit(f"short download from {address}: {size} bytes")
    return size / took / (1 << 20)


def wait_up(address: tuple[str, int]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            latency(address, 1, reuse=False)
            return
        except (OSError, http.client.HTTPException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def bench_forward(remote: Any, args: argparse.Namespace) -> None:
    client = docker_client()
    tag = uuid.uuid4().hex[:8]
    network = client.networks.create(f"canal-bench-fwd-{tag}", driver="bridge", labels={"canal.bench": tag})
    direct_box = None
    try:
        direct_box = client.containers.run(
            DEFAULT_IMAGE, ["python3", "-c", SERVER, str(args.size_mib)], detach=True, user="1000:1000",
            network=network.name, ports={"8000/tcp": ("127.0.0.1", None)}, labels={"canal.bench": tag},
            name=f"canal-bench-fwd-{tag}", cap_drop=["ALL"], security_opt=["no-new-privileges"])
        direct_box.reload()
        published = int(direct_box.attrs["NetworkSettings"]["Ports"]["8000/tcp"][0]["HostPort"])
        started = remote.tasks.start(f"python3 -c {shlex.quote(SERVER)} {args.size_mib}", name="bench-web",
                                     forward=["0:8000"])
        host, port = started.task.forwards[0].host.rsplit(":", 1)
        sides = {"forwarded (task --forward)": (host, int(port)), "direct (published port)": ("127.0.0.1",
                                                                                             published)}
        for address in sides.values():
            wait_up(address)
        _compare(sides, args)
        remote.tasks.cancel(started.task.id)
    finally:
        if direct_box is not None:
            direct_box.remove(force=True)
        network.remove()
        client.close()


def _compare(sides: dict[str, tuple[str, int]], args: argparse.Namespace) -> None:
    fresh: dict[str, list[float]] = {k: [] for k in sides}
    kept: dict[str, list[float]] = {k: [] for k in sides}
    rates: dict[str, list[float]] = {k: [] for k in sides}
    names = list(sides)
    for i in range(args.rounds_http):
        for name in names if i % 2 == 0 else names[::-1]:
            fresh[name] += latency(sides[name], args.requests // args.rounds_http, reuse=False)
            kept[name] += latency(sides[name], args.requests // args.rounds_http, reuse=True)
    for i in range(args.downloads):
        for name in names if i % 2 == 0 else names[::-1]:
            rates[name].append(download(sides[name], args.size_mib))
    print(f"forwarded HTTP vs a published port (load {load()})")
    for name in names:
        row(f"{name}: 512 B, new connection", fresh[name])
        row(f"{name}: 512 B, kept-alive", kept[name])
    for name in names:
        print(f"  {name}: {args.size_mib} MiB download  median {statistics.median(rates[name]):7.1f} MiB/s  "
              f"min {min(rates[name]):7.1f}  max {max(rates[name]):7.1f}  (n={len(rates[name])})")
    f, d = names
    print(f"  ratio p50 new connection {pct(fresh[f], 0.5) / pct(fresh[d], 0.5):.2f}x, kept-alive "
          f"{pct(kept[f], 0.5) / pct(kept[d], 0.5):.2f}x, throughput "
          f"{statistics.median(rates[f]) / statistics.median(rates[d]):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--rounds-http", type=int, default=10)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--downloads", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-tasks-"))
    os.environ.update(CANAL_RUNTIME_DIR=str(root / "rt"), CANAL_STATE_DIR=str(root / "state"),
                      CANAL_CONFIG_DIR=str(root / "config"))
    os.environ.pop("CANAL_NO_SERVER", None)
    project = root / "project"
    project.mkdir()
    for i in range(50):
        (project / f"file{i}.txt").write_text(f"content {i}\n")
    if os.geteuid() == 0:
        for path in [project, *project.iterdir()]:
            os.chown(path, 1000, 1000)
    build_default_image(docker_client())
    from canal import Canal

    remote = Canal.connect(project)
    try:
        remote.up()
        _start(remote)  # the background agent starts with the first task
        _run(remote)
        bench_start(remote, project, dict(os.environ), args.rounds)
        bench_forward(remote, args)
    finally:
        with contextlib.suppress(Exception):
            remote.down()
        subprocess.run([CANAL, "server", "stop"], env=dict(os.environ), capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
