"""Benchmark: compiling a shipped policy in a new process (what a server's first command, a restarted
server and every ``CANAL_NO_SERVER=1`` command pay), its inline examples already verified.

    python bench/bench_policy_load.py --rounds 15
    python bench/bench_policy_load.py --rounds 15 --against /path/to/baseline/worktree

Each round starts a fresh Python process per side (this tree; ``--against``: that tree's code on
``PYTHONPATH``), in turns with the order alternating; the process imports the loader, loads each
profile in turn and times it: the rules compiled, the examples not run (their marks were written by a
first process per side, as a machine has them after its first command). The first profile's time
includes the CEL environment's making and its cached parser's loading. Prints p50/p90 per profile
and side, the ratio, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchstats import quantile

REPO = Path(__file__).resolve().parent.parent
PROFILES = ("standard", "strict", "autonomous")
PROBE = """
import json, sys, time
from pathlib import Path
from canal.policy import loader
from canal.policy.parser_cache import VerifiedMarks
marks = Path(sys.argv[1])
out = {}
for profile in sys.argv[2:]:
    began = time.perf_counter()
    loader.load_policy(profile, verified=VerifiedMarks(marks, b"m" * 32))
    out[profile] = time.perf_counter() - began
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--against", type=Path, help="a worktree of the baseline (its code on PYTHONPATH)")
    args = parser.parse_args()
    sides = {"this": REPO}
    if args.against is not None:
        sides["baseline"] = args.against.resolve()
    times: dict[str, dict[str, list[float]]] = {s: {p: [] for p in PROFILES} for s in sides}
    before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="canal-bench-policy-load-") as marks:
        for side, tree in sides.items():  # the examples run once: their marks kept, as after a first command
            subprocess.run([sys.executable, "-c", PROBE, f"{marks}/{side}", *PROFILES],
                           env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, check=True)
        for i in range(args.rounds):
            for side in (list(sides) if i % 2 == 0 else list(reversed(sides))):
                env = {**os.environ, "PYTHONPATH": str(sides[side])}
                done = subprocess.run([sys.executable, "-c", PROBE, f"{marks}/{side}", *PROFILES], env=env,
                                      capture_output=True, text=True, check=True)
                for profile, took in json.loads(done.stdout).items():
                    times[side][profile].append(took)
    after = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {args.rounds} rounds; load average "
          f"{' '.join(f'{x:.2f}' for x in before)} -> {' '.join(f'{x:.2f}' for x in after)}")
    for profile in PROFILES:
        for side in sides:
            p50 = quantile(times[side][profile], 0.5) * 1000
            p90 = quantile(times[side][profile], 0.9) * 1000
            ratio = ""
            if side != "baseline" and "baseline" in sides:
                base = quantile(times["baseline"][profile], 0.5) * 1000
                ratio = f"   {base / p50:.2f}x faster than the baseline"
            print(f"  {profile:<10} {side:<9} p50 {p50:7.1f} ms  p90 {p90:7.1f} ms{ratio}")


if __name__ == "__main__":
    main()
