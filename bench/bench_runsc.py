"""Benchmark: what gVisor (runsc) costs against runc, side by side in one run.

Run: python bench/bench_runsc.py [--starts 5] [--rounds 200] [--repeats 5]

Same image, same hardened spec, same limits; only ``runtime`` differs. Every measurement alternates
between the two runtimes (runc first on even rounds, runsc first on odd ones) so both see the same
machine load:

- start: ``create`` (container started) until its session answers a first command;
- round trip: a warm session's ``true``, measured by the caller;
- CPU-bound: ``python3 -c`` summing squares (user time: no system calls to speak of);
- I/O-bound: 2,000 small files written, read back and deleted in /tmp (tmpfs) and in a bind-mounted
  host folder (what /workspace is), then 64 MiB written with fsync to the bind mount.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from benchstats import quantile as pct

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.engine import docker_client
from canal.sandbox.images import DEFAULT_IMAGE
from canal.sandbox.spec import Mount, SandboxSpec

RUNTIMES = ("runc", "runsc")
CPU = "python3 -c 'sum(i * i for i in range(3_000_000))'"
FILES = ("python3 -c \"import os, sys; d = sys.argv[1]; os.makedirs(d, exist_ok=True)\n"
         "for i in range(2000): open(f'{d}/f{i}', 'w').write('x' * 100)\n"
         "for i in range(2000): open(f'{d}/f{i}').read()\n"
         "for i in range(2000): os.unlink(f'{d}/f{i}')\" ")
BULK = "dd if=/dev/zero of=/data/bulk bs=1M count=64 conv=fsync status=none && rm /data/bulk"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def alternate(rounds: int, fn: Callable[[str], float]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {r: [] for r in RUNTIMES}
    for i in range(rounds):
        for runtime in (RUNTIMES if i % 2 == 0 else tuple(reversed(RUNTIMES))):
            samples[runtime].append(fn(runtime))
    return samples


def report(title: str, samples: dict[str, list[float]], unit: float = 1000, label: str = "ms") -> None:
    print(f"{title} (n={len(samples['runc'])} each)")
    for runtime, values in samples.items():
        print(f"  {runtime:<6} p50 {statistics.median(values) * unit:9.2f} {label}   "
              f"p95 {pct(values, 0.95) * unit:9.2f} {label}")
    ratio = statistics.median(samples["runsc"]) / statistics.median(samples["runc"])
    print(f"  ratio p50 runsc / runc: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    client = docker_client()
    backend = DockerBackend(client, owner=f"canal-bench-gv-{uuid.uuid4().hex[:8]}")
    folder = Path(tempfile.mkdtemp(prefix="canal-bench-runsc-"))
    folder.chmod(0o777)
    spec = SandboxSpec(image=DEFAULT_IMAGE, mounts=(Mount(source=folder, target="/data", read_only=False),))
    names: dict[str, str] = {}
    try:
        def start(runtime: str) -> float:
            name = f"canal-bench-{uuid.uuid4().hex[:8]}"
            began = time.perf_counter()
            backend.create(name, spec.model_copy(update={"runtime": runtime}))
            backend.exec(name, "true")
            took = time.perf_counter() - began
            backend.remove(name)
            return took

        report("Container start until the session answers", alternate(args.starts, start))
        for runtime in RUNTIMES:
            names[runtime] = f"canal-bench-{uuid.uuid4().hex[:8]}"
            backend.create(names[runtime], spec.model_copy(update={"runtime": runtime}))
            backend.exec(names[runtime], "true")

        def command(text: str) -> Callable[[str], float]:
            def run(runtime: str) -> float:
                result = backend.exec(names[runtime], text, timeout_s=300)
                assert result.ok, result.stderr.read_bytes()
                return result.duration_s
            return run

        report("Session round trip (`true`)", alternate(args.rounds, lambda r: timed(
            lambda: backend.exec(names[r], "true"))))
        report("CPU-bound: python3 sum of squares, 3M", alternate(args.repeats, command(CPU)))
        report("I/O: 2,000 small files in /tmp (tmpfs)", alternate(args.repeats, command(FILES + "/tmp/t")))
        report("I/O: 2,000 small files in a bind mount", alternate(args.repeats, command(FILES + "/data/t")))
        report("I/O: 64 MiB written with fsync, bind mount", alternate(args.repeats, command(BULK)))
    finally:
        for name in names.values():
            backend.remove(name)
        backend.close()
        client.close()
        for path in sorted(folder.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        folder.rmdir()


if __name__ == "__main__":
    main()
