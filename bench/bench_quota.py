"""Cost of watching a bind-mounted workspace's quota, next to ``du -s`` of the same tree.

    python bench/bench_quota.py                  # 20,000 files of 25 KiB (500 MB), 30 rounds
    python bench/bench_quota.py --files 2000 --rounds 50

Rows, each round in turn: (a) baseline ``du -s`` of the tree (the subprocess a naive watcher would run
on every heartbeat); (b) ``Quota.measure``: the agent's own walk (scandir, blocks, hard links once);
(c) ``Quota.exceeded``: the check the agent makes every 0.1 s while a command runs: one ``statvfs``
and a read of ``/proc/*/io`` (every process where the bench runs: hundreds on a host, a handful in a
sandbox), and no walk unless a signal says the headroom may be gone. Temp folder under ``--dir``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from canal.sandbox.agent.quota import Quota


def build(root: Path, files: int, size: int) -> None:
    per_dir = 200
    blob = os.urandom(size)
    for i in range(files):
        folder = root / f"d{i // per_dir:04d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i:06d}").write_bytes(blob)


def timed(fn: Callable[[], object], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def row(name: str, ms: list[float], base: float) -> str:
    ms = sorted(ms)
    p50, p95 = statistics.median(ms), ms[int(len(ms) * 0.95) - 1]
    return f"{name:<34} p50 {p50:9.3f} ms  p95 {p95:9.3f} ms  x{p50 / base:8.4f} of du"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--size", type=int, default=25 * 1024)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--dir", default=".")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-quota-") as tmp:
        root = Path(tmp)
        build(root, args.files, args.size)
        quota = Quota(str(root), 10 * 1024**3)
        quota.begin()
        du = timed(lambda: subprocess.run(["du", "-s", str(root)], capture_output=True, check=True),
                   args.rounds)
        walk = timed(quota.measure, args.rounds)
        check = timed(lambda: quota.exceeded(final=True), args.rounds * 20)
        base = statistics.median(du)
        procs = sum(1 for p in os.listdir("/proc") if p.isdigit())
        print(f"{args.files} files, {quota.usage / 1024**2:.0f} MiB on disk, {args.rounds} rounds, "
              f"{procs} processes in /proc")
        print(row("du -s (baseline)", du, base))
        print(row("Quota.measure (walk)", walk, base))
        print(row("Quota.exceeded (statvfs check)", check, base))
        print("walk spacing at the 5% budget: one walk per "
              f"{statistics.median(walk) / 0.05 / 1000:.2f} s of command time at most")


if __name__ == "__main__":
    main()
