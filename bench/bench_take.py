"""What one changed file adds to a command's checkpoint, against a checkpoint when nothing changed (issue 33).

    python bench/bench_take.py                                   # 20,000 files, 500 MB, 200 rounds
    python bench/bench_take.py --files 50000 --rounds 100
    python bench/bench_take.py --against /path/to/baseline/checkout --runs 2     # alternated runs

The store the server keeps per project (``watch=True``). Each round, in this order: a checkpoint with
nothing changed since the last one, then one file rewritten (same size, new bytes) and the next
checkpoint; the two are timed from the command's side, so both pay the same record, lock and
retention check, and the difference is what the changed file costs (reading and storing it, its
folder listed again, the delta manifest, the syncs, and whatever the store does per entry). The
rounds are spaced (``--interval``) so that the store's background upkeep (a new full manifest every
32 deltas, the minute's walk) is not always under way.

``--against`` runs this script in turns against a checkout of the code before a change and against
this one, and prints the baseline's figures over this one's (benchstats.alternate).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

from bench_prune import KEYS, workspace
from benchstats import alternate, pct, print_rows, without

import canal
from canal.host.checkpoints import CheckpointSettings, CheckpointStore


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mb", type=int, default=500, help="the workspace's size, spread over the files")
    parser.add_argument("--dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between rounds")
    parser.add_argument("--against", type=Path, help="a checkout of the baseline, run in turns with this")
    parser.add_argument("--runs", type=int, default=1, help="with --against: runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against is not None:
        alternate(__file__, without(sys.argv[1:], "--against", "--runs"), args.against, args.runs,
                  ("none_p50_ms", "one_p50_ms", "adds_ms", "one_p90_ms", "one_p99_ms"))
        return
    args.size = args.mb * 1_000_000 // args.files
    rng = random.Random(5)
    root, ws, paths = workspace(args, "canal-bench-take-", rng)
    try:
        settings = CheckpointSettings(max_workspace_bytes=4 << 30)
        store = CheckpointStore(root / "store", ws, settings, KEYS, watch=True)
        print(f"canal from {Path(canal.__file__).parent}; {args.files} files of {args.size} bytes; "
              f"load {_loadavg()}")
        t0 = time.perf_counter()
        store.take(kind="run")
        print(f"first checkpoint {time.perf_counter() - t0:.2f} s")
        time.sleep(0.2)  # past the racily-clean window of the first scan
        store.take(kind="run")
        none: list[float] = []
        one: list[float] = []
        walks = 0
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            store.take(kind="run", command="nothing changed")
            none.append(time.perf_counter() - t0)
            walks += bool(store.watch_note)
            rng.choice(paths).write_bytes(os.urandom(args.size))
            t0 = time.perf_counter()
            store.take(kind="run", command="one file changed")
            one.append(time.perf_counter() - t0)
            walks += bool(store.watch_note)
            time.sleep(args.interval)
        store.close()
        adds = pct(one, 0.5) - pct(none, 0.5)
        print_rows([("nothing changed", none), ("one file changed", one)], last="p99")
        print(f"one changed file adds {adds:.2f} ms (p50 - p50); walked everything in {walks} of "
              f"{2 * args.rounds} checkpoints; load {_loadavg()}")
        if args.json:
            print(json.dumps({"none_p50_ms": pct(none, 0.5), "one_p50_ms": pct(one, 0.5), "adds_ms": adds,
                              "one_p90_ms": pct(one, 0.9), "one_p99_ms": pct(one, 0.99)}))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
