"""Benchmark: the server's CPU time per warm ``canal run -- true``, for one or more source trees side by
side (a before and an after), with each call's wall time and ``docker exec CONTAINER true`` interleaved.

Run: python bench/bench_server_cpu.py [--rounds 60] [--tree before=/path/to/other/checkout] [--tree after=.]

Each tree gets its own server (started here in the foreground, ``PYTHONPATH`` = the tree, its own runtime,
data and config folders) and its own project (``workspace: ro``). A server's request threads are timed
with ``time.thread_time()`` around each request (the server's whole share of a call: reading the
request, the CLI inside the server, policy, trust check, audit, the session round trip, the presenter),
so the figure is CPU time, which a loaded machine inflates far less than wall time. The CPU of each process
started (the ``canal`` client, the ``docker`` client) is read from the children's resource usage. Rounds
alternate the trees and ``docker exec`` so load hits all alike.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import pct

WRAPPER = """
import sys, threading, time
from canal.server import daemon as d
out, lock = sys.argv[1], threading.Lock()
orig = d.Daemon._session
def timed(self, conn):
    start = time.thread_time()
    try:
        return orig(self, conn)
    finally:
        with lock:
            with open(out, "a") as fh:  # opened each time: the server closes what it inherited
                fh.write(f"{time.thread_time() - start} ")
d.Daemon._session = timed
from canal.server.main import main
main(["--idle-timeout", "900"])
"""
CLIENT = "import sys; from canal.cli.client import main; sys.argv[0] = 'canal'; main()"


def child_cpu() -> float:
    """User and system CPU of the processes this one waited for, so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def row(label: str, samples: list[float]) -> None:
    print(f"  {label:<40} p50 {pct(samples, 0.5):8.2f} ms   p90 {pct(samples, 0.9):8.2f} ms   "
          f"mean {statistics.fmean(samples) * 1000:8.2f} ms   (n={len(samples)})")


class Tree:
    def __init__(self, label: str, source: Path, root: Path) -> None:
        self.label = label
        self.root = root / label
        self.project = self.root / "project"
        self.project.mkdir(parents=True)
        (self.project / "canal.yaml").write_text("workspace: ro\n")
        if os.geteuid() == 0:  # owned by the sandbox user, as on a developer's machine
            for path in (self.project, self.project / "canal.yaml"):
                os.chown(path, 1000, 1000)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
        env.update(PYTHONPATH=str(source.resolve()), CANAL_RUNTIME_DIR=str(self.root / "rt"),
                   XDG_DATA_HOME=str(self.root / "data"), CANAL_CONFIG_DIR=str(self.root / "config"))
        self.env = env
        self.cpu_file = self.root / "cpu.json"
        self.server = subprocess.Popen([sys.executable, "-c", WRAPPER, str(self.cpu_file)], env=env,
                                       cwd=self.root,  # not this folder: "-c" imports from the cwd first
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        self.wall: list[float] = []
        self.client_cpu: list[float] = []

    def wait_ready(self) -> None:
        """Until this tree's server (the timed one, not one a client would start) answers."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", CLIENT, "server", "status", "--json"], env=self.env,
                                  capture_output=True, text=True, check=False)
            if done.returncode == 0 and f'"pid": {self.server.pid}' in done.stdout:
                return
            time.sleep(0.3)
        raise SystemExit(f"{self.label}: the timed server did not start")

    def call(self) -> float:
        before = child_cpu()
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", CLIENT, "run", "--", "true"],
                              env=self.env, cwd=self.project, stdin=subprocess.DEVNULL, capture_output=True,
                              check=False)
        took = time.perf_counter() - start
        self.client_cpu.append(child_cpu() - before)
        if done.returncode != 0:
            raise SystemExit(f"{self.label}: canal run failed: {done.stderr.decode()}")
        return took

    def container(self) -> str:
        code = "from pathlib import Path; from canal.host.paths import project_key; " \
               f"print(project_key(Path({str(self.project)!r})))"
        key = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True, text=True,
                             check=True).stdout.strip()
        return f"canal-{key}-default"

    def stop(self) -> list[float]:
        self.server.send_signal(signal.SIGTERM)
        self.server.wait(timeout=60)
        subprocess.run(["docker", "rm", "-f", self.container()], capture_output=True, check=False)
        return [float(x) for x in self.cpu_file.read_text().split()] if self.cpu_file.exists() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--tree", action="append", default=[], help="LABEL=PATH (repeatable); default: this")
    args = parser.parse_args()
    specs = [t.split("=", 1) for t in args.tree] or [["this", str(Path(__file__).parent.parent)]]
    root = Path(tempfile.mkdtemp(prefix="canal-bench-cpu-"))
    trees = [Tree(label, Path(path), root) for label, path in specs]
    try:
        run(trees, args.rounds)
    finally:
        cpu = {t.label: t.stop() for t in trees}
        if not os.environ.get("KEEP"):
            shutil.rmtree(root, ignore_errors=True)
    print("server thread CPU per request (the same calls):")
    for label, samples in cpu.items():
        row(f"{label}: server CPU", samples)


def run(trees: list[Tree], rounds: int) -> None:
    for tree in trees:
        tree.wait_ready()
        for _ in range(3):  # the sandbox made, the policy compiled
            tree.call()
        tree.cpu_file.unlink(missing_ok=True)  # only the timed rounds count
        tree.client_cpu.clear()
    container = trees[0].container()
    docker: list[float] = []
    docker_cpu: list[float] = []
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for i in range(rounds):
        for tree in trees[i % len(trees):] + trees[:i % len(trees)]:
            tree.wall.append(tree.call())
        before, start = child_cpu(), time.perf_counter()
        subprocess.run(["docker", "exec", container, "true"], capture_output=True, check=True)
        docker.append(time.perf_counter() - start)
        docker_cpu.append(child_cpu() - before)
    print(f"load average after: {os.getloadavg()[0]:.2f}; {rounds} rounds")
    for tree in trees:
        row(f"{tree.label}: canal run -- true (wall)", tree.wall)
    row("docker exec CONTAINER true (wall)", docker)
    print("CPU of the process started (the client; for docker exec its Go client, not dockerd):")
    for tree in trees:
        row(f"{tree.label}: canal client CPU", tree.client_cpu)
    row("docker exec client CPU", docker_cpu)


if __name__ == "__main__":
    main()
