"""A command's checkpoint over a long series, retention pruning included (issue 33, finding 3).

    python bench/bench_prune.py                      # 20,000 files, 150 warm-up + 200 measured takes
    python bench/bench_prune.py --interval 1 --takes 300     # a command a second for 5 minutes
    python bench/bench_prune.py --against /path/to/baseline/checkout --rounds 2   # interleaved

The store the server keeps per project (``watch=True``), retention as a long-lived project has it once
its first day is past (``floor_hours: 0``; ``floor_count`` 20, ``keep`` 100: every checkpoint past the
newest 100 may go). Before every take one file is rewritten, as a command would; each take is timed
from the command's side (what ``Canal.run`` waits for), and pruning is counted (checkpoints gone).
At the end the store is waited for (a pruning still running), then verified: every kept checkpoint's
manifest and objects are read back, so a faster prune that lost something would show here.

``--against`` runs this script in turns against a checkout of the code before a change (``PYTHONPATH``
pointed at it) and against this one, ``--rounds`` times each, and prints each run's figures and the
baseline's over this checkout's; the load average is printed at the start and at the end of each run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_checkpoints import generate
from benchstats import alternate, without

import canal
from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.checkpoints.records import read_manifest

KEYS = Keys("bench", {"bench": b"b" * 32})


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def workspace_args(parser: argparse.ArgumentParser) -> None:
    """The options this script and bench_undo.py share: the workspace, and the baseline to alternate with."""
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=5_000, help="bytes per file")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--against", type=Path, help="a checkout of the baseline, run in turns with this")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)


def workspace(args: argparse.Namespace, prefix: str, rng: random.Random) -> tuple[Path, Path, list[Path]]:
    """A temporary folder (root), the workspace generated in it, and its files."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=args.dir))
    ws = root / "ws"
    ws.mkdir()
    return root, ws, generate(ws, args.files, 0, rng=rng, file_bytes=args.size)


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * q))]


def wait_idle(store: CheckpointStore) -> None:
    """A store that prunes in the background: wait for it (older code has nothing to wait for)."""
    settle = getattr(store, "settle", None)
    if settle is not None:
        settle()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workspace_args(parser)
    parser.add_argument("--warmup", type=int, default=150)
    parser.add_argument("--takes", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.0,
                        help="seconds from one take's start to the next (0: back to back)")
    parser.add_argument("--rounds", type=int, default=1, help="with --against: runs of each side")
    args = parser.parse_args()
    if args.against is not None:
        alternate(__file__, without(sys.argv[1:], "--against", "--rounds"), args.against, args.rounds,
                  ("first_s", "p50_ms", "p95_ms", "p99_ms", "max_ms"))
        return
    rng = random.Random(7)
    root, ws, paths = workspace(args, "canal-bench-prune-", rng)
    try:
        settings = CheckpointSettings(floor_hours=0, floor_count=20, keep=100)
        store = CheckpointStore(root / "store", ws, settings, KEYS, watch=True)
        print(f"canal from {Path(canal.__file__).parent}; {args.files} files; load {_loadavg()}")
        t0 = time.perf_counter()
        store.take(kind="run")
        first = time.perf_counter() - t0
        print(f"first checkpoint {first:.2f} s")
        times: list[float] = []
        before = len(store.list())
        for i in range(args.warmup + args.takes):
            rng.choice(paths).write_bytes(os.urandom(args.size))
            t0 = time.perf_counter()
            store.take(kind="run", command=f"step {i}")
            took = time.perf_counter() - t0
            if i >= args.warmup:
                times.append(took * 1000)
                if args.interval > took:
                    time.sleep(args.interval - took)
        wait_idle(store)
        kept = store.list()
        for cp in kept:  # every kept checkpoint still reads back whole
            for entry in read_manifest(store.manifests_dir, cp.manifest).values():
                if entry[0] == "f":
                    store.objects.verify(entry[6])
        taken = 1 + args.warmup + args.takes
        print(f"measured {len(times)} takes: p50 {pct(times, 0.5):.1f} ms  p95 {pct(times, 0.95):.1f} ms  "
              f"p99 {pct(times, 0.99):.1f} ms  max {max(times):.1f} ms  p99/p50 "
              f"{pct(times, 0.99) / pct(times, 0.5):.1f}x")
        print(f"checkpoints taken {taken}, kept {len(kept)} (were {before} after the first), every kept "
              f"one verified; load {_loadavg()}")
        if args.json:
            print(json.dumps({"first_s": first, "p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95),
                              "p99_ms": pct(times, 0.99), "max_ms": max(times)}))
        store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
