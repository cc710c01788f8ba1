"""Benchmark: a new project's first ``canal run -- true`` with no server running (its start included),
side by side with ``docker run --rm IMAGE true`` (target: under 2x), for one or more source trees.

    python bench/bench_cold.py --rounds 10
    python bench/bench_cold.py --rounds 10 --tree before=/path/to/baseline/checkout --tree after=.
    python bench/bench_cold.py --rounds 5 --empty-cache      # the user's cache folder emptied each time

Each tree gets its own runtime, state, config and cache folders (``PYTHONPATH`` = the tree, so the
server the client starts runs that tree's code). A round, for each tree in turn (the order rotates) and
for ``docker run``: the tree's server is stopped and waited for, a brand-new project folder is made
(empty: the default settings, ``workspace: rw``), and ``canal run -- true`` is timed from the client's
start until it exits, the server's start, imports, policy, the sandbox's creation and session included;
then its server is stopped (what it loads once quiet would land on the next measurement) and its
sandbox removed. The client is ``python -c`` importing the thin client, as
bench_server_cpu.py runs it, so both trees pay the same interpreter start.

Nothing is warm but what a user's machine keeps between days: the key store, and the private cache
folder (cel-python's parser, the marks of policies whose examples passed) as the first round left it;
``--empty-cache`` empties that folder before every call instead. Each tree's package is compiled to
bytecode first (``compileall``), as a wheel install is: this machine sets ``PYTHONDONTWRITEBYTECODE``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import pct

from canal.host.paths import project_key
from canal.sandbox.images import DEFAULT_IMAGE

CLIENT = "import sys; from canal.cli.client import main; sys.argv[0] = 'canal'; main()"


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Tree:
    def __init__(self, label: str, source: Path, root: Path) -> None:
        self.label = label
        self.source = source.resolve()
        self.root = root / label
        self.cache = self.root / "cache"
        self.root.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
        env.update(PYTHONPATH=str(self.source), CANAL_RUNTIME_DIR=str(self.root / "rt"),
                   XDG_DATA_HOME=str(self.root / "data"), CANAL_CONFIG_DIR=str(self.root / "config"),
                   CANAL_CACHE_DIR=str(self.cache))
        self.env = env
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.made = 0
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(self.source / "canal")],
                       capture_output=True, check=True)

    def canal(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-c", CLIENT, *args], env=self.env, cwd=cwd or self.root,
                              stdin=subprocess.DEVNULL, capture_output=True, check=False)

    def stop(self) -> None:
        """Stop this tree's server and wait until its process is gone."""
        done = self.canal("server", "status", "--json")
        pid = None
        if done.returncode == 0 and b'"pid": ' in done.stdout:
            pid = int(done.stdout.split(b'"pid": ')[1].split(b",")[0].split(b"}")[0])
        self.canal("server", "stop")
        deadline = time.monotonic() + 60
        while pid is not None and Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def first_command(self, empty_cache: bool) -> float:
        self.stop()
        if empty_cache:
            shutil.rmtree(self.cache, ignore_errors=True)
        self.made += 1
        project = self.root / f"project-{self.made}"
        project.mkdir(parents=True)
        if os.geteuid() == 0:  # owned by the sandbox user, as on a developer's machine
            os.chown(project, 1000, 1000)
        before, start = child_cpu(), time.perf_counter()
        done = self.canal("run", "--", "true", cwd=project)
        took = time.perf_counter() - start
        self.cpu.append(child_cpu() - before)
        # stopped now: once quiet, a server loads what other doors need (the MCP SDK, 0.3-0.6 s of CPU),
        # which would land on the next tree's command and on docker run
        self.stop()
        subprocess.run(["docker", "rm", "-f", f"canal-{project_key(project)}-default"], capture_output=True,
                       check=False)
        if done.returncode != 0:
            raise SystemExit(f"{self.label}: canal run failed: {done.stderr.decode()[-2000:]}")
        return took


def row(label: str, samples: list[float]) -> None:
    print(f"  {label:<46} p50 {pct(samples, 0.5):8.1f} ms   p90 {pct(samples, 0.9):8.1f} ms   "
          f"mean {statistics.fmean(samples) * 1000:8.1f} ms   (n={len(samples)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--tree", action="append", default=[], help="LABEL=PATH (repeatable); default: this")
    parser.add_argument("--empty-cache", action="store_true", help="empty each tree's cache folder each time")
    args = parser.parse_args()
    specs = [t.split("=", 1) for t in args.tree] or [["this", str(Path(__file__).parent.parent)]]
    root = Path(tempfile.mkdtemp(prefix="canal-bench-cold-"))
    trees = [Tree(label, Path(path), root) for label, path in specs]
    try:
        for tree in trees:  # the key store made, the cache folder filled, the image's layers read once
            tree.first_command(args.empty_cache)
            tree.wall.clear()
            tree.cpu.clear()
        docker: list[float] = []
        print(f"load average before: {_loadavg()}")
        for i in range(args.rounds):
            for tree in trees[i % len(trees):] + trees[:i % len(trees)]:
                tree.wall.append(tree.first_command(args.empty_cache))
            start = time.perf_counter()
            subprocess.run(["docker", "run", "--rm", DEFAULT_IMAGE, "true"], capture_output=True, check=True)
            docker.append(time.perf_counter() - start)
        print(f"load average after: {_loadavg()}; {args.rounds} rounds"
              f"{'; cache folder emptied before each call' if args.empty_cache else ''}")
        for tree in trees:
            row(f"{tree.label}: first canal run -- true (wall)", tree.wall)
        row(f"docker run --rm {DEFAULT_IMAGE} true", docker)
        for tree in trees:
            row(f"{tree.label}: client CPU (the server's not counted)", tree.cpu)
        for tree in trees:
            ratio = pct(tree.wall, 0.5) / pct(docker, 0.5)
            print(f"  {tree.label}: {ratio:.2f}x docker run at p50 (target < 2x)")
    finally:
        for tree in trees:
            tree.stop()
        if not os.environ.get("KEEP"):
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
