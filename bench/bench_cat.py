"""Benchmark: big outputs end to end, ``canal run -- cat F`` against ``docker exec CONTAINER cat F``.

    python bench/bench_cat.py --rounds 5 --sizes 1mb,64mib,b64:8mib

One temporary project (``workspace: ro``, so no checkpoint) holding the files, its own runtime,
state and config folders, and the server they start (stopped and removed at the end). Each round runs,
alternating the order, the CLI through its warm server and ``docker exec`` on the project's own
container, both as whole processes with stdout and stderr captured (docker prints the whole output; canal
prints the head and tail and saves the whole output redacted, which is the work being measured).
Targets (issue 33): 64 MiB of logs within 2x, 8 MiB of base64 within 3x, 1 MB within 1.3x.
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
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-cat-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
    env.update(CANAL_RUNTIME_DIR=str(root / "rt"), XDG_DATA_HOME=str(root / "data"),
               CANAL_CONFIG_DIR=str(root / "config"), CANAL_CACHE_DIR=str(root / "cache"))
    project = make_project(root, "p", "ro")
    try:
        run(env, project, args)
    finally:
        subprocess.run([CANAL, "server", "stop", "--all"], env=env, capture_output=True, check=False)
        subprocess.run(["docker", "rm", "-f", f"canal-{project_key(project)}-default"],
                       capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


def run(env: dict[str, str], project: Path, args: argparse.Namespace) -> None:
    names = []
    for i, spec in enumerate(args.sizes.split(",")):
        name = f"f{i}.txt"
        (project / name).write_bytes(make_data(spec))
        if os.geteuid() == 0:
            os.chown(project / name, 1000, 1000)
        names.append((spec, name))
    for _ in range(2):  # sandbox made, server started, policy compiled
        timed([CANAL, "run", "--", "true"], env, project)
    container = f"canal-{project_key(project)}-default"
    print(f"python {sys.version.split()[0]}, rounds {args.rounds}")
    for spec, name in names:
        canal: list[float] = []
        docker: list[float] = []
        before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        for r in range(args.rounds):
            steps = [(canal, [CANAL, "run", "--", "cat", name]),
                     (docker, ["docker", "exec", "-w", "/workspace", container, "cat", name])]
            for samples, argv in steps if r % 2 == 0 else reversed(steps):
                samples.append(timed(argv, env, project))
        after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        size = (project / name).stat().st_size
        print(f"{spec} ({size} bytes), load average {before} -> {after}")
        for label, samples in (("canal run -- cat F", canal), ("docker exec C cat F", docker)):
            print(f"  {label:22} p50 {pct(samples, 0.5):9.1f} ms  p90 {pct(samples, 0.9):9.1f} ms  "
                  f"max {max(samples) * 1000:9.1f} ms")
        print(f"  ratio canal / docker exec at p50: {pct(canal, 0.5) / pct(docker, 0.5):.2f}x")


if __name__ == "__main__":
    main()
