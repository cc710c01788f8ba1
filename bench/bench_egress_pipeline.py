"""Benchmark: what reading the egress proxy's log after every command costs ``Canal.run("true")``.

Run: python bench/bench_egress_pipeline.py [--rounds 200]

Two projects in this one process, each with a warm sandbox: ``network: none`` and ``network:
{mode: allowlist, ...}``. Rounds alternate which goes first. The difference of the p50s is the log read
(the engine's container list and one log read from the end of the proxy's log) per command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchstats import pct

from canal import Canal
from canal.runtime.settings.config import parse_config

ALLOWLIST = "sandbox:\n  network: {mode: allowlist, allow: ['pypi.org:443']}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="canal-bench-") as tmp:
        root = Path(tmp)
        os.environ["CANAL_STATE_DIR"] = str(root / "state")
        os.environ["CANAL_CONFIG_DIR"] = str(root / "config")
        canals = {}
        for label, text in (("network: none", ""), ("network: allowlist", ALLOWLIST)):
            project = root / label.split()[-1]
            project.mkdir()
            canals[label] = Canal(project, config=parse_config(text))
        try:
            samples: dict[str, list[float]] = {label: [] for label in canals}
            for canal in canals.values():
                canal.up()
                for _ in range(10):
                    canal.run("true")
            for i in range(args.rounds):
                for label in (list(canals) if i % 2 == 0 else list(reversed(canals))):
                    start = time.perf_counter()
                    result = canals[label].run("true")
                    samples[label].append(time.perf_counter() - start)
                    assert result.status == "ok", result.text
            print(f"Canal.run('true'), rounds: {args.rounds}, load average: {os.getloadavg()[0]:.2f}")
            for label, values in samples.items():
                print(f"  {label:<20} p50 {statistics.median(values) * 1000:7.2f} ms   "
                      f"p99 {pct(values, 0.99):7.2f} ms")
            medians = {label: statistics.median(values) for label, values in samples.items()}
            cost = medians["network: allowlist"] - medians["network: none"]
            print(f"  the proxy log read after each command: {cost * 1000:.2f} ms at p50")
        finally:
            for canal in canals.values():
                canal.down()
                canal.close()


if __name__ == "__main__":
    main()
