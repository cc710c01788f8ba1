"""Audit append and approval round trip vs the bare durable append they are built on, side by side.

    python bench/bench_audit.py                 # 2000 rounds
    python bench/bench_audit.py --rounds 500

Each round, alternating order: (a) baseline: open O_APPEND, write one line of the same size, fdatasync,
close; (b) ``AuditLog.append`` of a run.started-shaped record (lock, tail, HMAC, write, fdatasync);
(c) ``latest_revision`` on a warm ledger; (d) ``ApprovalService.request`` + ``redeem``. Temp folder under
the current directory's filesystem (``--dir``), removed at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from canal.host.approvals import ApprovalService, DecisionSummary
from canal.host.audit import AuditLog

DATA = {"sandbox": "default", "container_id": "0" * 64, "image_digest": "sha256:" + "1" * 64,
        "command": "rm -rf build/", "cwd": "/workspace", "approver": None, "approval": None,
        "decision": {"action": "allow", "rule_ids": ["read-only"], "source": "standard",
                     "policy_hash": "2" * 64, "reason": ""}}


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def stats(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--dir", default=".")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix=".bench-audit-") as tmp:
        root = Path(tmp)
        log = AuditLog(root / "audit" / "audit.jsonl", b"k" * 32, "k-bench")
        log.append("run.started", DATA)
        line = (root / "audit" / "audit.jsonl").read_bytes()
        raw = root / "raw.jsonl"

        def baseline() -> None:
            fd = os.open(raw, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(fd, line)
            os.fdatasync(fd)
            os.close(fd)

        svc = ApprovalService(root, b"a" * 32)
        summary = DecisionSummary(("rm-recursive",), "recursive delete")

        def approval() -> None:
            token = svc.request("rm -rf build/", "default", "/workspace", "p", summary).token
            svc.redeem(token, "rm -rf build/", "default", "/workspace", "p")

        log.record_revision("doc", 1, "d")
        cases: dict[str, Callable[[], object]] = {
            "bare append+fdatasync": baseline,
            "AuditLog.append": lambda: log.append("run.started", DATA),
            "latest_revision (warm)": lambda: log.latest_revision("doc"),
            "approval request+redeem": approval,
        }
        samples: dict[str, list[float]] = {k: [] for k in cases}
        names = list(cases)
        for i in range(args.rounds):
            for name in names if i % 2 == 0 else reversed(names):
                samples[name].append(timed(cases[name]))
        base = stats(samples["bare append+fdatasync"])[0]
        print(f"rounds={args.rounds} line={len(line)} bytes")
        for name, xs in samples.items():
            p50, p99 = stats(xs)
            print(f"{name:<26} p50 {p50:7.3f} ms  p99 {p99:7.3f} ms  p50/baseline {p50 / base:5.2f}x")


if __name__ == "__main__":
    main()
