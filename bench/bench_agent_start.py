"""Benchmark: a session's start in a running sandbox (the agent's exec, its start-up, its hello), with
the agent shipped as compiled code (now) and as source only (before: the sandbox's python3 compiled
~100 KB of it each time), interleaved on one container.

    python bench/bench_agent_start.py --rounds 40
    python bench/bench_agent_start.py --rounds 40 --against /path/to/baseline/worktree

The baseline is the previous boot line and program exactly (source only, ``exec(compile(...))``), so
both sides differ only in what the sandbox's Python does with what it reads. ``--against`` adds a third
side: the agent of another checkout (its own launch, built by that checkout's code), to compare two
versions of the agent itself.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from benchstats import pct

from canal.sandbox.docker import session as session_module
from canal.sandbox.docker.agent_program import AGENT_SOURCE, Launch, agent_program
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.engine import docker_client
from canal.sandbox.docker.session import Session
from canal.sandbox.images import DEFAULT_IMAGE
from canal.sandbox.spec import SandboxSpec


def source_boot(size: int) -> str:
    """The boot line before the code part (stop 50): read the program, compile it, run it."""
    return (f"import os;b=b''\nwhile len(b)<{size}:b+=os.read(0,{size}-len(b))or os._exit(70)\n"
            "exec(compile(b,'canal-agent','exec'))")


_SOURCE = AGENT_SOURCE.encode()
SIDES = {
    "compiled code (now)": agent_program,
    "source only (before)": lambda: Launch(source_boot(len(_SOURCE)), _SOURCE),
}


def launch_of(tree: Path) -> Launch:
    """The agent launch that checkout builds (its agent, its program format)."""
    code = ("import pickle, sys; from canal.sandbox.docker.agent_program import agent_program; "
            "sys.stdout.buffer.write(pickle.dumps(tuple(agent_program())))")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(tree)},
                          cwd=tree, capture_output=True, check=True)
    return Launch(*pickle.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--against", type=Path, help="a checkout of the baseline (its agent and program)")
    args = parser.parse_args()
    if args.against is not None:
        baseline = launch_of(args.against.resolve())
        SIDES[f"{args.against.name}'s agent"] = lambda: baseline
    client = docker_client()
    backend = DockerBackend(client, owner=f"canal-bench-{uuid.uuid4().hex[:6]}")
    name = f"canal-bench-{uuid.uuid4().hex[:8]}"
    info = backend.create(name, SandboxSpec(image=DEFAULT_IMAGE))
    container = client.containers.get(info.id)
    user = container.attrs["Config"]["User"] or "0"
    samples: dict[str, list[float]] = {side: [] for side in SIDES}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    try:
        for _ in range(3):  # the engine's and the image's caches warmed for both sides
            for launch in SIDES.values():
                session_module.agent_program = launch
                Session(client, info.id, user=user, workdir="/", init=False).close()
        for _ in range(args.rounds):
            order = list(SIDES)
            random.shuffle(order)
            for side in order:
                session_module.agent_program = SIDES[side]
                start = time.perf_counter()
                started = Session(client, info.id, user=user, workdir="/", init=False)
                samples[side].append(time.perf_counter() - start)
                started.close()
    finally:
        backend.remove(name)
        backend.close()
    print(f"load average after: {os.getloadavg()[0]:.2f}; {args.rounds} rounds, interleaved")
    for side, xs in samples.items():
        print(f"  {side:<22} p50 {pct(xs, 0.5):7.1f} ms   p90 {pct(xs, 0.9):7.1f} ms   "
              f"mean {statistics.fmean(xs) * 1000:7.1f} ms")
    now = statistics.median(samples["compiled code (now)"])
    for side in list(SIDES)[1:]:
        before = statistics.median(samples[side])
        print(f"  against {side}: {before / now:.2f}x faster at p50 ({(before - now) * 1000:.1f} ms less "
              "per session start)")


if __name__ == "__main__":
    main()
