"""Benchmark: persistent-session round trip vs docker SDK ``exec_run``, and warm-pool acquire vs docker run.

Run: python bench/bench_session.py [--rounds 300] [--exec-run-rounds 60] [--acquires 8] [--runtime runsc]
Both sides of each comparison run in this one process, against the same engine (and, for the round
trip, the same container). Last, what one look of the agent at the process count costs inside the
sandbox (gVisor's process limit is seen that way: docs/gvisor.md), with a few processes and with 60.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from canal.sandbox.agent import procs as _agent_procs
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.engine import docker_client
from canal.sandbox.docker.pool import WarmPool
from canal.sandbox.images import DEFAULT_IMAGE
from canal.sandbox.spec import SandboxSpec


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p99 * 1000


def row(label: str, samples: list[float]) -> tuple[float, float]:
    p50, p99 = percentiles(samples)
    print(f"  {label:<48} n={len(samples):<4} p50 {p50:8.2f} ms   p99 {p99:8.2f} ms")
    return p50, p99


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def round_trip(backend: DockerBackend, spec: SandboxSpec, rounds: int, exec_rounds: int) -> None:
    """Every path once per round, in shuffled order, so all of them see the same machine load."""
    name = f"canal-bench-{uuid.uuid4().hex[:8]}"
    backend.create(name, spec)
    try:
        backend.warm(name)
        container = backend.client.containers.get(name)
        paths: dict[str, Callable[[], object]] = {
            "session, str command (`true`)": lambda: backend.exec(name, "true"),
            "session, str command (`cd /tmp && export X=1`)":
                lambda: backend.exec(name, "cd /tmp && export X=1"),
            "session, str command (`echo hi`)": lambda: backend.exec(name, "echo hi"),
            "session, argv command (`['true']`)": lambda: backend.exec(name, ["true"]),
        }
        def exec_run() -> object:
            return container.exec_run(["true"])

        samples: dict[str, list[float]] = {label: [] for label in paths}
        baseline: list[float] = []
        every = max(1, rounds // max(1, exec_rounds))
        for fn in [*paths.values(), exec_run, exec_run, exec_run]:
            fn()  # warm-up
        order = list(paths)
        shuffle = random.Random(7).shuffle
        for i in range(rounds):
            shuffle(order)  # no path always runs right after the baseline's engine work
            for label in order:
                samples[label].append(timed(paths[label]))
            if i % every == 0:
                baseline.append(timed(exec_run))
        print("Command round trip on one container, paths interleaved")
        base = row("docker SDK exec_run(['true'])", baseline)
        for label, values in samples.items():
            p50, _ = row(label, values)
            print(f"    ratio p50 exec_run / this: {base[0] / p50:6.1f}x")
    finally:
        backend.remove(name)


def acquire(backend: DockerBackend, spec: SandboxSpec, count: int) -> None:
    print("Sandbox acquire (hardened spec; until a command can run)")
    pool = WarmPool(backend, spec, size=1)
    pooled, plain, names = [], [], []
    try:
        for _ in range(count):
            pool.fill()  # refills run in the background between acquires in real use
            name = f"canal-bench-{uuid.uuid4().hex[:8]}"
            names.append(name)
            start = time.perf_counter()
            pool.acquire(name)
            pooled.append(time.perf_counter() - start)
            other = f"canal-bench-{uuid.uuid4().hex[:8]}"
            names.append(other)
            start = time.perf_counter()
            backend.create(other, spec)
            plain.append(time.perf_counter() - start)
    finally:
        pool.close()
        for name in names:
            backend.remove(name)
    warm = row("warm pool acquire", pooled)
    cold = row("plain docker run (backend.create)", plain)
    print(f"  ratio p50 docker run / pool acquire: {cold[0] / warm[0]:6.1f}x")


LOOK = """
import os, statistics, subprocess, time
def per_call(fn):
    samples = []
    for _ in range(200):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6
for extra in (0, 56):
    kids = [subprocess.Popen(["sleep", "60"]) for _ in range(extra)]
    print(f"  {process_count():>3} processes: process_count {per_call(process_count):8.1f} us   "
          f"task_count {per_call(task_count):8.1f} us   beat {per_call(beat):8.1f} us")
    for kid in kids:
        kid.kill()
        kid.wait()
"""


def looks(backend: DockerBackend, spec: SandboxSpec) -> None:
    """The agent's look at the process count, timed inside the sandbox (the module's own source)."""
    name = f"canal-bench-{uuid.uuid4().hex[:8]}"
    backend.create(name, spec)
    try:
        source = Path(_agent_procs.__file__).read_text() + LOOK
        result = backend.exec(name, ["python3", "-c", source], timeout_s=300)
        print(f"The agent's look at the process count, inside a {spec.runtime} sandbox (median of 200)")
        print(result.stdout.read_bytes().decode(), end="")
    finally:
        backend.remove(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--exec-run-rounds", type=int, default=60)
    parser.add_argument("--acquires", type=int, default=8)
    parser.add_argument("--runtime", default="runc", help="runc, or runsc for gVisor")
    args = parser.parse_args()
    backend = DockerBackend(docker_client(), owner=f"canal-bench-{uuid.uuid4().hex[:6]}")
    spec = SandboxSpec(image=DEFAULT_IMAGE, runtime=args.runtime)
    print(f"load average before: {os.getloadavg()}, cpus: {os.cpu_count()}")
    try:
        round_trip(backend, spec, args.rounds, args.exec_run_rounds)
        acquire(backend, spec, args.acquires)
        looks(backend, spec)
    finally:
        backend.close()
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
