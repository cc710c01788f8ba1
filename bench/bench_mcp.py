"""Warm ``run_command("true")`` round trip over MCP stdio vs a direct ``docker exec <container> true``.

    python bench/bench_mcp.py                 # 200 rounds
    python bench/bench_mcp.py --rounds 50

Starts ``canal mcp`` as a subprocess in a temporary project (state and config folders temporary too),
connects the mcp SDK's stdio client, warms the sandbox with one call, then alternates per round:
(a) ``tools/call run_command {"command": "true"}`` through the whole stack (JSON-RPC over pipes, argument
validation, policy, session exec, presenter, audit append) and (b) ``docker exec <same container> true``
run with ``subprocess``, the baseline a harness without a warm session would pay. Each round also times
``view canal.yaml`` (host side only: the protocol and server overhead without a sandbox). Removes the
container.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from canal.host.paths import project_key

CANAL = str(Path(sys.executable).parent / "canal")


def stats(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.99))]


def _project(root: Path) -> tuple[Path, dict[str, str]]:
    project = root / "proj"
    project.mkdir()
    (project / "canal.yaml").write_text("policy:\n  profile: standard\n")
    if os.geteuid() == 0:
        os.chown(project, 1000, 1000)
        os.chown(project / "canal.yaml", 1000, 1000)
    # canal mcp runs in a Canal server (docs/server.md): this one lives in the run's own runtime folder
    env = {"CANAL_STATE_DIR": str(root / "state"), "CANAL_CONFIG_DIR": str(root / "config"),
           "CANAL_RUNTIME_DIR": str(root / "rt")}
    for name in ("state", "config"):
        (root / name).mkdir(mode=0o700)
    if "DOCKER_HOST" in os.environ:
        env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
    return project, env


Samples = list[float]


async def measure(project: Path, env: dict[str, str], rounds: int) -> tuple[Samples, Samples, Samples]:
    params = StdioServerParameters(command=CANAL, args=["mcp"], env=env, cwd=str(project))
    container = f"canal-{project_key(project)}-default"
    via_mcp: list[float] = []
    via_exec: list[float] = []
    host_only: list[float] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        first = await session.call_tool("run_command", {"command": "true"}, read_timeout_seconds=600)
        if first.is_error:
            raise SystemExit(f"warm-up call failed: {first.content}")
        for i in range(rounds):
            t0 = time.perf_counter()
            await session.call_tool("view", {"path": "canal.yaml"})
            host_only.append((time.perf_counter() - t0) * 1000)
            order = (0, 1) if i % 2 == 0 else (1, 0)
            for which in order:
                t0 = time.perf_counter()
                if which == 0:
                    result = await session.call_tool("run_command", {"command": "true"})
                    assert not result.is_error
                    via_mcp.append((time.perf_counter() - t0) * 1000)
                else:
                    subprocess.run(["docker", "exec", container, "true"], check=True)
                    via_exec.append((time.perf_counter() - t0) * 1000)
    return via_mcp, via_exec, host_only


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        project, env = _project(Path(tmp))
        try:
            via_mcp, via_exec, host_only = anyio.run(measure, project, env, args.rounds)
        finally:
            subprocess.run([CANAL, "server", "stop", "--all"], env={**os.environ, **env}, capture_output=True,
                           check=False)
            subprocess.run(["docker", "rm", "-f", f"canal-{project_key(project)}-default"],
                           capture_output=True, check=False)
    m50, m99 = stats(via_mcp)
    e50, e99 = stats(via_exec)
    print(f"rounds: {args.rounds}")
    print(f"{'path':<42}{'p50 ms':>10}{'p99 ms':>10}")
    print(f"{'MCP stdio run_command(true), warm':<42}{m50:>10.2f}{m99:>10.2f}")
    print(f"{'docker exec <container> true (subprocess)':<42}{e50:>10.2f}{e99:>10.2f}")
    h50, h99 = stats(host_only)
    print(f"{'MCP stdio view(canal.yaml) (no sandbox)':<42}{h50:>10.2f}{h99:>10.2f}")
    print(f"ratio docker exec / MCP: p50 {e50 / m50:.1f}x, p99 {e99 / m99:.1f}x")


if __name__ == "__main__":
    main()
