"""Benchmark: big outputs end to end, ``canal run -- cat F`` against ``docker exec CONTAINER cat F``.

    python bench/bench_cat.py --rounds 5 --sizes 1mb,64mib,b64:8mib
    python bench/bench_cat.py --rounds 15 --against /path/to/baseline/worktree   # its own venv's canal

One temporary project (``workspace: ro``, so no checkpoint) holding the files, its own runtime,
state and config folders, and the server they start (stopped and removed at the end). Each round runs,
alternating the order, the CLI through its warm server and ``docker exec`` on the project's own
container, both as whole processes with stdout and stderr captured (docker prints the whole output; canal
prints the head and tail and saves the whole output redacted, which is the work being measured).
Targets (issue 33): 64 MiB of logs within 2x, 8 MiB of base64 within 3x, 1 MB within 1.3x.

``--against WORKTREE`` adds the ``canal`` of that worktree's ``.venv`` (the code before a change): a
second project with the same files, its own runtime, state and config folders and so its own server
and sandbox, run in the same rounds, the order turning each round, so both sides meet the same load;
``docker exec`` runs in each side's sandbox in turn.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_server import CANAL, make_project, timed
from benchstats import pct
from redact_stream import make_data

from canal.host.paths import project_key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="1mb,64mib,b64:8mib")
    parser.add_argument("--against", type=Path, help="a worktree of the baseline, with its own .venv")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-cat-"))
    sides = [Side("canal run -- cat F", CANAL, root / "new")]
    if args.against is not None:
        baseline = str(args.against / ".venv" / "bin" / "canal")
        sides.append(Side("baseline: canal run", baseline, root / "base"))
    try:
        run(sides, args)
    finally:
        for side in sides:
            subprocess.run([side.canal, "server", "stop", "--all"], env=side.env, capture_output=True,
                           check=False)
            subprocess.run(["docker", "rm", "-f", f"canal-{project_key(side.project)}-default"],
                           capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


class Side:
    """One ``canal`` (this tree's or the baseline's) with its own project, folders and server."""

    def __init__(self, label: str, canal: str, root: Path) -> None:
        self.label, self.canal = label, canal
        root.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
        self.env.update(CANAL_RUNTIME_DIR=str(root / "rt"), XDG_DATA_HOME=str(root / "data"),
                        CANAL_CONFIG_DIR=str(root / "config"), CANAL_CACHE_DIR=str(root / "cache"))
        self.project = make_project(root, "p", "ro")
        self.samples: list[float] = []


def run(sides: list[Side], args: argparse.Namespace) -> None:
    names = []
    for i, spec in enumerate(args.sizes.split(",")):
        name, data = f"f{i}.txt", make_data(spec)
        for side in sides:
            (side.project / name).write_bytes(data)
            if os.geteuid() == 0:
                os.chown(side.project / name, 1000, 1000)
        names.append((spec, name))
    for side in sides:
        for _ in range(2):  # sandbox made, server started, policy compiled
            timed([side.canal, "run", "--", "true"], side.env, side.project)
    project = sides[0].project
    containers = [f"canal-{project_key(side.project)}-default" for side in sides]
    print(f"python {sys.version.split()[0]}, rounds {args.rounds}")
    for spec, name in names:
        docker: list[float] = []
        for side in sides:
            side.samples = []
        before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        for r in range(args.rounds):
            steps = [(side.samples, [side.canal, "run", "--", "cat", name], side) for side in sides]
            # docker exec in each side's sandbox in turn: neither side's is the only one it loads
            which = r % len(sides)
            docker_argv = ["docker", "exec", "-w", "/workspace", containers[which], "cat", name]
            steps.append((docker, docker_argv, sides[which]))
            turn = r % len(steps)
            for samples, argv, side in steps[turn:] + steps[:turn]:
                samples.append(timed(argv, side.env, side.project))
        after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        size = (project / name).stat().st_size
        print(f"{spec} ({size} bytes), load average {before} -> {after}")
        for label, samples in [*((s.label, s.samples) for s in sides), ("docker exec C cat F", docker)]:
            print(f"  {label:22} p50 {pct(samples, 0.5):9.1f} ms  p90 {pct(samples, 0.9):9.1f} ms  "
                  f"max {max(samples) * 1000:9.1f} ms")
        for side in sides:
            ratio = pct(side.samples, 0.5) / pct(docker, 0.5)
            print(f"  ratio {side.label} / docker exec at p50: {ratio:.2f}x")


if __name__ == "__main__":
    main()
