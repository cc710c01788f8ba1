"""Sealed state: seal + write + read + unseal of a 50-step run document, against plain JSON, side by side.

    python bench/bench_sealed.py                # 300 rounds
    python bench/bench_sealed.py --rounds 100 --steps 50

Each round, alternating order, on the same document:
  (a) baseline: ``json.dumps`` + write to a file + read + ``json.loads`` (no fsync, no crypto);
  (b) baseline+durable: the same through ``runtime.fsutil.atomic_write`` (temp, fsync, rename, fsync dir);
  (c) sealed: ``SealedStore.save`` (lock, verify current file, CAS, redact readable strings, seal every
      step result and gate secret, HMAC, atomic write, ledger) + ``SealedStore.load`` (parse, unwrap,
      decrypt, HMAC check, ledger check): one workflow advance.
Key ring and state live in a temp folder under ``--dir`` (default: the current directory), removed at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canal.core.fsutil import atomic_write
from canal.host.keys import KeyStore
from canal.host.sealed import MemoryLedger, SealedStore

SENSITIVE = ["gate.*.password", "gate.*.token", "steps.*.result"]


def run_doc(steps: int) -> dict[str, Any]:
    return {
        "schema": "canal.run/1", "run_id": "r-7f3a9c", "workflow": "release", "status": "running",
        "current_step": steps // 2, "created_at": "2026-01-01T00:00:00Z", "approved_by": "alice",
        "gate": {f"s{i:02d}": {"version": f"1.{i}.0", "notes": "ship it " * 5, "password": f"pw-{i}-xyz",
                               "token": f"tok{i}"} for i in range(0, steps, 5)},
        "steps": [{"id": f"s{i:02d}", "type": "automated", "status": "done",
                   "started": "2026-01-01T00:00:01Z", "ended": "2026-01-01T00:00:02Z",
                   "command": ["make", "test", f"--shard={i}"],
                   "result": {"exit": 0, "duration_ms": 420 + i,
                              "stdout": "".join(f"test_{i}_{j} PASSED\n" for j in range(12)),
                              "stderr": "", "files": [f"out/{i}/report.xml"]}}
                  for i in range(steps)],
    }


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def stats(xs: list[float]) -> tuple[float, float]:
    ordered = sorted(xs)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--dir", type=Path, default=Path.cwd())
    args = parser.parse_args()
    doc = run_doc(args.steps)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix=".bench-sealed-") as tmp:
        root = Path(tmp)
        store = SealedStore(root / "state", KeyStore(root / "keys", env={}), MemoryLedger())
        plain, durable = root / "plain.json", root / "durable.json"
        # warm-up: the rule set compiles once per process
        revision = store.save("run", doc, sensitive_paths=SENSITIVE, expected_revision=0)

        def baseline() -> None:
            plain.write_text(json.dumps(doc))
            json.loads(plain.read_text())

        def baseline_durable() -> None:
            atomic_write(durable, json.dumps(doc).encode())
            json.loads(durable.read_bytes())

        def sealed() -> None:
            nonlocal revision
            revision = store.save("run", doc, sensitive_paths=SENSITIVE, expected_revision=revision)
            store.load("run")

        cases: dict[str, list[float]] = {"baseline": [], "baseline+durable": [], "sealed": []}
        fns = {"baseline": baseline, "baseline+durable": baseline_durable, "sealed": sealed}
        for i in range(args.rounds):
            order = list(fns) if i % 2 == 0 else list(reversed(fns))
            for name in order:
                cases[name].append(timed(fns[name]))
        size = store.path_for("run").stat().st_size
    base_p50 = stats(cases["baseline"])[0]
    print(f"{args.steps}-step run document, {args.rounds} rounds, sealed file {size} bytes, "
          f"plain JSON {len(json.dumps(doc))} bytes")
    print(f"{'case':<18}{'p50 ms':>10}{'p99 ms':>10}{'p50 / baseline':>16}")
    for name, xs in cases.items():
        p50, p99 = stats(xs)
        print(f"{name:<18}{p50:>10.2f}{p99:>10.2f}{p50 / base_p50:>15.1f}x")
    print(f"target: sealed p50 < 20 ms -> {'met' if stats(cases['sealed'])[0] < 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
