"""Benchmark: the Python API's ``Canal.run("true")`` against the bare session round trip it wraps, and
against the docker SDK's ``exec_run`` on the same container (target: at least 20x faster).

Run: python bench/bench_pipeline.py [--rounds 300]

Two projects in one process, each with its warm sandbox: one with ``workspace: ro`` (nothing for a
checkpoint to protect: the pipeline as this benchmark means it) and one with the default
``workspace: rw`` (a checkpoint of the workspace before every command the policy cannot prove
read-only). Interleaved round by round so machine load hits all alike: ``backend.exec(container,
"true")`` (the session alone), ``canal.run("true")`` in each project (policy decision, audit intent
record with fdatasync, exec, presenter, outcome record; ``true`` is proven read-only, so no
checkpoint), ``canal.run("sh -c true")`` in the ``rw`` project (a command the policy cannot prove
read-only: a checkpoint first; target 10x) and, every fifth round, ``container.exec_run(["true"])`` on
the first project's container.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchstats import pct

from canal import Canal
from canal.sandbox.docker.engine import docker_client


def project(root: Path, name: str, workspace: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "canal.yaml").write_text(f"workspace: {workspace}\n")
    if os.geteuid() == 0:  # owned by the sandbox user, as on a developer's machine
        for path in (folder, folder / "canal.yaml"):
            os.chown(path, 1000, 1000)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="canal-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(root / "data")  # state per project, in the temporary folder
        os.environ["CANAL_CONFIG_DIR"] = str(root / "config")
        os.environ.pop("CANAL_STATE_DIR", None)
        with Canal(project(root, "ro", "ro")) as ro, Canal(project(root, "rw", "rw")) as rw:
            try:
                run(ro, rw, args.rounds)
            finally:
                ro.down()
                rw.down()


def run(ro: Canal, rw: Canal, rounds: int) -> None:
    loaded = os.getloadavg()[0]
    container = ro.up().name
    rw.up()
    backend = ro.backend
    engine = docker_client().containers.get(container)
    for _ in range(10):
        backend.exec(container, "true")
        ro.run("true")
        rw.run("true")
        rw.run("sh -c true")
    bare: list[float] = []
    api: list[float] = []
    checkpointed: list[float] = []
    shell: list[float] = []
    sdk: list[float] = []
    for i in range(rounds):
        start = time.perf_counter()
        backend.exec(container, "true")
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = ro.run("true")
        api.append(time.perf_counter() - start)
        assert result.status == "ok", result.text
        start = time.perf_counter()
        rw.run("true")
        checkpointed.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = rw.run("sh -c true")
        shell.append(time.perf_counter() - start)
        assert result.checkpoint is not None, result.text
        if i % 5 == 0:
            start = time.perf_counter()
            engine.exec_run(["true"])
            sdk.append(time.perf_counter() - start)
    print(f"rounds: {rounds}, load average: {os.getloadavg()[0]:.2f} (at the start: {loaded:.2f})")
    for label, samples in (("session exec (bare)", bare), ("Canal.run, workspace: ro", api),
                           ("Canal.run, workspace: rw", checkpointed),
                           ("Canal.run sh -c true, rw", shell), ("docker SDK exec_run", sdk)):
        print(f"  {label:<26} p50 {pct(samples, 0.5):7.2f} ms   p90 {pct(samples, 0.9):7.2f} ms   "
              f"p99 {pct(samples, 0.99):7.2f} ms   mean {statistics.fmean(samples) * 1000:7.2f} ms")
    print(f"  pipeline overhead p50 {pct(api, 0.5) - pct(bare, 0.5):.2f} ms; Canal.run is "
          f"{pct(sdk, 0.5) / pct(api, 0.5):.1f}x faster than exec_run (target >= 20x); rw "
          f"{pct(sdk, 0.5) / pct(checkpointed, 0.5):.1f}x; checkpointed (sh -c true) "
          f"{pct(sdk, 0.5) / pct(shell, 0.5):.1f}x (target >= 10x)")


if __name__ == "__main__":
    main()
