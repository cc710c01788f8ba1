"""Benchmark: the Python API's ``Canal.run("true")`` against the bare session round trip it wraps, and
against the docker SDK's ``exec_run`` on the same container (target: at least 20x faster).

Run: python bench/bench_pipeline.py [--rounds 300]

All measure the same warm container in this one process, interleaved round by round so machine load
hits them alike: ``backend.exec(container, "true")`` (the session alone), ``canal.run("true")`` (policy
decision, audit intent record with fdatasync, exec, presenter, outcome record) and, every fifth round,
``container.exec_run(["true"])``. The difference of the first two p50s is Canal's per-command overhead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from canal.runtime.api import Canal
from canal.sandbox.engine import docker_client


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="canal-bench-") as tmp:
        root = Path(tmp)
        os.environ["CANAL_STATE_DIR"] = str(root / "state")
        os.environ["CANAL_CONFIG_DIR"] = str(root / "config")
        (root / "project").mkdir()
        with Canal(root / "project") as canal:
            try:
                run(canal, args.rounds)
            finally:
                canal.down()


def run(canal: Canal, rounds: int) -> None:
    container = canal.up().name
    backend = canal.backend
    engine = docker_client().containers.get(container)
    for _ in range(10):
        backend.exec(container, "true")
        canal.run("true")
    bare: list[float] = []
    api: list[float] = []
    sdk: list[float] = []
    for i in range(rounds):
        start = time.perf_counter()
        backend.exec(container, "true")
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = canal.run("true")
        api.append(time.perf_counter() - start)
        assert result.status == "ok", result.text
        if i % 5 == 0:
            start = time.perf_counter()
            engine.exec_run(["true"])
            sdk.append(time.perf_counter() - start)
    print(f"rounds: {rounds}, load average: {os.getloadavg()[0]:.2f}")
    for label, samples in (("session exec (bare)", bare), ("Canal.run (pipeline)", api),
                           ("docker SDK exec_run", sdk)):
        print(f"  {label:<24} p50 {pct(samples, 0.5):7.2f} ms   p99 {pct(samples, 0.99):7.2f} ms   "
              f"mean {statistics.fmean(samples) * 1000:7.2f} ms")
    overhead = pct(api, 0.5) - pct(bare, 0.5)
    print(f"  overhead p50 {overhead:.2f} ms; Canal.run is {pct(sdk, 0.5) / pct(api, 0.5):.1f}x faster "
          "than exec_run (target >= 20x)")


if __name__ == "__main__":
    main()
