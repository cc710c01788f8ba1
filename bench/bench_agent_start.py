"""Benchmark: a session's start in a running sandbox (the agent's exec, its start-up, its hello), with
the agent shipped as compiled code (now) and as source only (before: the sandbox's python3 compiled
~100 KB of it each time), interleaved on one container.

    python bench/bench_agent_start.py --rounds 40

The baseline is the previous boot line and program exactly (source only, ``exec(compile(...))``), so
both sides differ only in what the sandbox's Python does with what it reads.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import uuid

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
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
    now, before = (statistics.median(samples[s]) for s in SIDES)
    print(f"  p50 ratio: {before / now:.2f}x faster ({(before - now) * 1000:.1f} ms less per session start)")


if __name__ == "__main__":
    main()
