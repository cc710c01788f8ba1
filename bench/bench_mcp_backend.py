"""A backend tool call through Canal vs a direct MCP client call to the same server, same run (issue 38).

The server is the shipped example's ticket tracker (docs/examples/mcp-backend, standard library only),
in its Canal sandbox (``_mcp-tickets``). Each round, in alternating order:

- ``canal``: ``Canal(project).call_tool("list_tickets", {})`` in-process: arguments checked, the server
  started in its sandbox, initialize, tools/list (the schema and annotations check), the policy, the
  audit intent, tools/call, the presenter, the audit outcome;
- ``direct``: the mcp SDK's own client (``stdio_client`` + ``ClientSession``) starting the same server
  in the same sandbox with ``docker exec -i``: initialize, then tools/call; no policy, no audit;
- ``direct-kept`` (for scale): one SDK session kept open, tools/call only.

Prints p50/p95/p99 per side, the ratios of the p50s, and the load average before and after.

    python bench/bench_mcp_backend.py --rounds 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import pct
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "mcp-backend"
SERVER = "/tmp/canal-mcp/tickets/mcp/tickets.py"  # where Canal puts the approved copy in the sandbox


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _project(base: Path) -> Path:
    project = base / "project"
    shutil.copytree(EXAMPLE, project)
    if os.geteuid() == 0:
        for path in [project, *project.rglob("*")]:
            os.chown(path, 1000, 1000)
    os.environ.update(CANAL_STATE_DIR=str(base / "state"), CANAL_CONFIG_DIR=str(base / "config"))
    from canal.host.approvals import Approver
    from canal.runtime.services import Services

    services = Services(project)
    services.trust.approve(Approver(user="bench", how="tty"), services.trust.status().snapshot.digest)
    return project


async def _direct_once(params: StdioServerParameters) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("list_tickets", {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="canal-bench-mcp-"))
    project = _project(base)
    from canal import Canal

    canal = Canal(project)
    try:
        canal.tools.discover()
        for _ in range(3):
            assert canal.call_tool("list_tickets", {}).status == "ok"
        from canal.runtime.mcpremote.launch import server_ref

        container = server_ref(canal, "tickets").container
        params = StdioServerParameters(command="docker", args=[
            "exec", "-i", "-u", "1000:1000", "-w", "/workspace", container, "python3", SERVER])

        async def run() -> dict[str, list[float]]:
            times: dict[str, list[float]] = {"canal": [], "direct": [], "direct-kept": []}
            async with stdio_client(params) as (read, write), ClientSession(read, write) as kept:
                await kept.initialize()
                for _ in range(3):
                    await _direct_once(params)
                for i in range(args.rounds):
                    sides = ["canal", "direct", "direct-kept"]
                    for side in sides if i % 2 == 0 else list(reversed(sides)):
                        start = time.perf_counter()
                        if side == "canal":
                            await asyncio.to_thread(canal.call_tool, "list_tickets", {})
                        elif side == "direct":
                            await _direct_once(params)
                        else:
                            await kept.call_tool("list_tickets", {})
                        times[side].append(time.perf_counter() - start)
            return times

        before = _loadavg()
        times = asyncio.run(run())
        after = _loadavg()
    finally:
        canal.close()
        from canal.host.paths import project_key

        mine = subprocess.run(["docker", "ps", "-aq", "--filter", f"name=canal-{project_key(project)}-"],
                              capture_output=True, text=True, check=False).stdout.split()
        if mine:
            subprocess.run(["docker", "rm", "-f", *mine], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
    report = {side: {f"p{q}": round(pct(v, q / 100), 1) for q in (50, 95, 99)} for side, v in times.items()}
    ratios = {f"canal/{side}": round(report["canal"]["p50"] / report[side]["p50"], 2)
              for side in ("direct", "direct-kept")}
    print(json.dumps({"rounds": args.rounds, "ms": report, "p50_ratio": ratios,
                      "loadavg_before": before, "loadavg_after": after}, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
