"""Benchmark: the ``canal`` CLI through its warm server, side by side with ``docker exec``.

    python bench/bench_server.py                # 60 warm rounds, 5 cold starts, 10 MCP initializes
    python bench/bench_server.py --rounds 30 --cold 3 --mcp 5

Everything runs in a temporary runtime folder, state and config (its own server, stopped at the end) and
two temporary projects, removed at the end:

- warm: interleaved per round, wall time of the whole process, measured from here: ``canal run -- true``
  in a project with ``workspace: ro`` (no checkpoint needed), the same in a project with the default
  ``workspace: rw`` (a checkpoint before every command the policy cannot prove read-only), and
  ``docker exec CONTAINER true`` on the first project's own container (target: canal no slower);
- cold: ``canal server stop``, then ``canal run -- true`` (the sandbox exists): server start, imports,
  policy, a new session (target: under 1.5 s);
- MCP: ``canal mcp`` spawned until its ``initialize`` answer, through the warm server (target: under
  300 ms), and in-process (``CANAL_NO_SERVER=1``) for comparison;
- new projects: the first ``canal run -- true`` of a brand-new project whose sandbox the warm pool made
  ahead (``workspace: none``: nothing of the project is mounted, so a sandbox can be made before the
  project exists; target: under 100 ms plus the CLI's start), alternating with a new project that mounts
  its folder (``workspace: rw``: made on demand, as Docker fixes mounts at creation).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from benchstats import pct
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from canal.host.paths import project_key

CANAL = str(Path(sys.executable).parent / "canal")


def row(label: str, samples: list[float]) -> None:
    print(f"  {label:<44} p50 {pct(samples, 0.5):8.1f} ms   p99 {pct(samples, 0.99):8.1f} ms   "
          f"mean {statistics.fmean(samples) * 1000:8.1f} ms   (n={len(samples)})")


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr.decode()[-2000:]}")
    return took


def make_project(root: Path, name: str, workspace: str) -> Path:
    project = root / name
    project.mkdir()
    (project / "canal.yaml").write_text(f"workspace: {workspace}\n")
    if os.geteuid() == 0:  # the sandbox user (1000) owns it, as on a developer's machine
        for path in (project, project / "canal.yaml"):
            os.chown(path, 1000, 1000)
    return project


async def initialize(env: dict[str, str], cwd: Path) -> float:
    params = StdioServerParameters(command=CANAL, args=["mcp"], env=env, cwd=str(cwd))
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        took = time.perf_counter() - start
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--mcp", type=int, default=10)
    parser.add_argument("--new", type=int, default=5, help="new projects of each kind")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-server-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
    # state per project under a temporary data folder (one CANAL_STATE_DIR would be one project's)
    env.update(CANAL_RUNTIME_DIR=str(root / "rt"), XDG_DATA_HOME=str(root / "data"),
               CANAL_CONFIG_DIR=str(root / "config"), CANAL_CACHE_DIR=str(root / "cache"))
    ro, rw = make_project(root, "ro", "ro"), make_project(root, "rw", "rw")
    try:
        run(env, ro, rw, args)
    finally:
        subprocess.run([CANAL, "server", "stop", "--all"], env=env, capture_output=True, check=False)
        for project in (ro, rw):
            subprocess.run(["docker", "rm", "-f", f"canal-{project_key(project)}-default"],
                           capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


def run(env: dict[str, str], ro: Path, rw: Path, args: argparse.Namespace) -> None:
    canal_true = [CANAL, "run", "--", "true"]
    container = f"canal-{project_key(ro)}-default"
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for project in (ro, rw):  # sandboxes made, server started, policy compiled
        for _ in range(3):
            timed(canal_true, env, project)
    warm_ro: list[float] = []
    warm_rw: list[float] = []
    docker: list[float] = []
    for _ in range(args.rounds):
        warm_ro.append(timed(canal_true, env, ro))
        docker.append(timed(["docker", "exec", container, "true"], env, ro))
        warm_rw.append(timed(canal_true, env, rw))
    print(f"warm, interleaved ({args.rounds} rounds):")
    row("canal run -- true (workspace: ro)", warm_ro)
    row("canal run -- true (workspace: rw, checkpoint)", warm_rw)
    row("docker exec CONTAINER true", docker)
    print(f"  ratio docker exec / canal run (ro): {pct(docker, 0.5) / pct(warm_ro, 0.5):.2f}x at p50")
    cold: list[float] = []
    for _ in range(args.cold):
        subprocess.run([CANAL, "server", "stop"], env=env, capture_output=True, check=True)
        cold.append(timed(canal_true, env, ro))
    print(f"cold first call, server stopped before each ({args.cold}):")
    row("canal run -- true (server start included)", cold)
    served = [anyio.run(initialize, env, ro) for _ in range(args.mcp)]
    local_env = {**env, "CANAL_NO_SERVER": "1"}
    local = [anyio.run(initialize, local_env, ro) for _ in range(max(2, args.mcp // 3))]
    print("canal mcp: spawn until the initialize answer:")
    row("through the warm server", served)
    row("in-process (CANAL_NO_SERVER=1)", local)
    new_projects(env, ro.parent, args.new)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def pooled_ready(env: dict[str, str], cwd: Path) -> int:
    out = subprocess.run([CANAL, "server", "status", "--json"], env=env, cwd=cwd, capture_output=True,
                         text=True, check=True).stdout
    return int(json.loads(out).get("pooled_ready", 0))


def new_projects(env: dict[str, str], root: Path, count: int) -> None:
    canal_true = [CANAL, "run", "--", "true"]
    seed = make_project(root, "pool-seed", "none")
    timed(canal_true, env, seed)  # the server starts a pool for this spec
    pooled: list[float] = []
    fresh: list[float] = []
    for i in range(count):
        deadline = time.monotonic() + 120
        while pooled_ready(env, seed) < 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        pooled.append(timed(canal_true, env, make_project(root, f"pool-{i}", "none")))
        fresh.append(timed(canal_true, env, make_project(root, f"fresh-{i}", "rw")))
    print(f"a new project's first command ({count} of each):")
    row("from the warm pool (workspace: none)", pooled)
    row("made on demand (workspace: rw)", fresh)
    for project in root.iterdir():
        if project.name.startswith(("pool-", "fresh-")):
            subprocess.run(["docker", "rm", "-f", f"canal-{project_key(project)}-default"],
                           capture_output=True, check=False)


if __name__ == "__main__":
    main()
