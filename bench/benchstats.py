"""Percentiles for the benchmarks (nearest rank), shared by the scripts in this folder: run as
``python bench/NAME.py``, they find it beside them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank, in the values' own unit."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def pct(samples: list[float], q: float) -> float:
    """The ``q`` quantile of durations in seconds, in milliseconds."""
    return quantile(samples, q) * 1000


def print_rows(rows: list[tuple[str, list[float]]], *, digits: int = 2, last: str = "max") -> None:
    """One line per series of durations (seconds): its p50, p90 and its ``last`` (``max`` or ``p99``)
    in milliseconds, the names right-aligned."""
    width = max(len(name) for name, _ in rows)
    for name, xs in rows:
        end = max(xs) * 1000 if last == "max" else pct(xs, 0.99)
        print(f"{name:>{width}}: p50 {pct(xs, 0.5):8.{digits}f} ms  p90 {pct(xs, 0.9):8.{digits}f} ms  "
              f"{last} {end:8.{digits}f} ms")


def alternate(script: str, argv: list[str], baseline: Path, rounds: int, keys: tuple[str, ...]) -> None:
    """Run ``script`` in turns against a checkout of the baseline (``PYTHONPATH`` pointed at it) and
    against this checkout, ``rounds`` times each, and print each run's output and, for every key of the
    JSON line a run prints last (``--json`` is passed), the medians and the baseline's over this one's."""
    here = str(Path(__file__).resolve().parents[1])
    if not (baseline / "canal" / "__init__.py").is_file():
        sys.exit(f"{Path(script).name}: {baseline} holds no canal package; give a checkout of the baseline, "
                 "e.g. git worktree add /tmp/baseline main")
    results: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
    for r in range(rounds):
        for side, path in (("baseline", str(baseline)), ("this", here)):
            env = {**os.environ, "PYTHONPATH": path}
            out = subprocess.run([sys.executable, script, *argv, "--json"], env=env, check=True,
                                 capture_output=True, text=True).stdout
            print(f"round {r + 1} {side}:", flush=True)
            for line in out.splitlines():
                if line.startswith("{"):
                    results[side].append(json.loads(line))
                else:
                    print("   ", line, flush=True)
    for key in keys:
        base = sorted(x[key] for x in results["baseline"])
        this = sorted(x[key] for x in results["this"])
        mid_b, mid_t = base[len(base) // 2], this[len(this) // 2]
        print(f"{key:>12}: baseline {mid_b:9.2f}  this {mid_t:9.2f}  baseline/this {mid_b / mid_t:6.2f}x")


def without(argv: list[str], *options: str) -> list[str]:
    """``argv`` without each of ``options`` and the value after it."""
    out = list(argv)
    for option in options:
        if option in out:
            i = out.index(option)
            del out[i:i + 2]
    return out
