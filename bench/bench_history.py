"""Benchmark: listing the checkpoints of a busy day, ``canal checkpoints`` and the MCP ``checkpoints`` reply.

    python bench/bench_history.py --checkpoints 3000 --rounds 7
    python bench/bench_history.py --checkpoints 3000 --rounds 7 --against /path/to/baseline/worktree

Inside the retention floor (24 h) every checkpoint is kept: an agent running a command every 30 s keeps
~3,000 a day. One project with that many (each after a one-file change), its own state, config and
runtime folders. Each round, for each side in turn (the order alternating): ``canal checkpoints`` as a
whole process in-process (``CANAL_NO_SERVER=1``: every record read and checked) and through the side's
warm server, and the MCP tool's reply (text and structured content, as an agent receives them). This
tree lists the newest 20 by default; ``--against WORKTREE`` (that tree's code on ``PYTHONPATH``) is the
code before, which listed every one. Reports p50/p90 of wall time, the bytes printed or replied, the
ratio to the baseline, and the load average.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import pct

REPO = Path(__file__).resolve().parent.parent
CLIENT = "import sys; from canal.cli.client import main; sys.argv[0] = 'canal'; main()"
MCP_REPLY = """
import json, sys
from pathlib import Path
from canal.mcp.reversible import Reversible
from canal.mcp.tools import BY_NAME, parse_args
from canal import Canal
reply = Reversible(Canal(Path(sys.argv[1]))).checkpoints(parse_args(BY_NAME["checkpoints"], {}))
print(len(reply.text.encode()), len(json.dumps(reply.data).encode()))
"""


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _fill(project: Path, env: dict[str, str], count: int) -> None:
    script = f"""
import sys
from pathlib import Path
from canal.runtime.services import Services
project = Path({str(project)!r})
store = Services(project).checkpoints
for i in range({count}):
    (project / "src" / f"m{{i % 50}}.py").write_text(f"v{{i}}\\n")
    store.take(kind="run", command=f"python3 step.py {{i}}")
"""
    subprocess.run([sys.executable, "-c", script], env=env, check=True)


class Side:
    def __init__(self, label: str, tree: Path, root: Path, base_env: dict[str, str]) -> None:
        self.label = label
        self.env = {**base_env, "PYTHONPATH": str(tree), "CANAL_RUNTIME_DIR": str(root / f"rt-{label}")}
        self.times: dict[str, list[float]] = {"in-process": [], "server": [], "mcp": []}
        self.sizes: dict[str, int] = {}

    def cli(self, project: Path, *, server: bool) -> None:
        env = dict(self.env)
        if not server:
            env["CANAL_NO_SERVER"] = "1"
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", CLIENT, "checkpoints"], env=env, cwd=project,
                              capture_output=True, check=False)
        took = time.perf_counter() - began
        if done.returncode != 0:
            raise SystemExit(f"{self.label}: canal checkpoints failed: {done.stderr.decode()[-1500:]}")
        name = "server" if server else "in-process"
        self.times[name].append(took)
        self.sizes[name] = len(done.stdout)

    def mcp(self, project: Path) -> None:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", MCP_REPLY, str(project)], env=self.env,
                              capture_output=True, check=True, text=True)
        self.times["mcp"].append(time.perf_counter() - began)
        text, data = done.stdout.split()
        self.sizes["mcp"] = int(text)
        self.sizes["mcp structured"] = int(data)

    def stop(self) -> None:
        subprocess.run([sys.executable, "-c", CLIENT, "server", "stop"], env=self.env, capture_output=True,
                       check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--against", type=Path, help="a worktree of the baseline (its code on PYTHONPATH)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-history-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
    env.update(CANAL_STATE_DIR=str(root / "state"), CANAL_CONFIG_DIR=str(root / "config"),
               CANAL_KEY=base64.b64encode(b"h" * 32).decode())
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "canal.yaml").write_text("workspace: rw\n")
    sides = [Side("this", REPO, root, env)]
    if args.against is not None:
        sides.append(Side("baseline", args.against.resolve(), root, env))
    try:
        began = time.perf_counter()
        _fill(project, {**env, "PYTHONPATH": str(REPO)}, args.checkpoints)
        print(f"{args.checkpoints} checkpoints taken in {time.perf_counter() - began:.1f} s; "
              f"load average {_loadavg()}")
        for side in sides:  # each side's server started, its caches as a running server has them
            side.cli(project, server=True)
            side.times["server"].clear()
        for i in range(args.rounds):
            for side in sides if i % 2 == 0 else reversed(sides):
                side.cli(project, server=False)
                side.cli(project, server=True)
                side.mcp(project)
        print(f"{args.rounds} rounds; load average after {_loadavg()}")
        base = sides[-1]
        for name in ("in-process", "server", "mcp"):
            for side in sides:
                p50 = pct(side.times[name], 0.5)
                ratio = f"   {pct(base.times[name], 0.5) / p50:5.2f}x faster than the baseline" \
                    if side is not base else ""
                p90 = pct(side.times[name], 0.9)
                print(f"  {side.label:<9} {name:<11} p50 {p50:8.1f} ms  p90 {p90:8.1f} ms"
                      f"  {side.sizes[name]:>9} bytes{ratio}")
        for side in sides:
            print(f"  {side.label:<9} mcp structured content {side.sizes['mcp structured']:>9} bytes")
    finally:
        for side in sides:
            side.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
