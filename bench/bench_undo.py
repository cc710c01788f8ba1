"""`canal undo` of one file in a big workspace, and the checkpoint of the command after it (issue 33).

    python bench/bench_undo.py                                  # 20,000 files, 30 rounds
    python bench/bench_undo.py --files 50000 --rounds 20
    python bench/bench_undo.py --against /path/to/baseline/checkout --rounds 20   # alternated runs

The store the server keeps per project (``watch=True``). Each round, as an agent's session would: one
file is rewritten, the next command's checkpoint is taken, then ``undo`` (no checkpoint named: the
newest after which something changed) puts the file back, and the checkpoint of the command after
the undo is taken. Each of the three is timed; beside them, the floor: copying the one file's bytes
back (``shutil.copyfile``). Every undo is checked (the file's bytes are the old ones again).

``--against`` runs this script in turns against a checkout of the code before a change and against this
one and prints the baseline's figures over this one's (benchstats.alternate).
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

from bench_prune import KEYS, workspace, workspace_args
from benchstats import alternate, pct, print_rows, without

import canal
from canal.host.checkpoints import CheckpointSettings, CheckpointStore


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workspace_args(parser)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--runs", type=int, default=1, help="with --against: runs of each side")
    args = parser.parse_args()
    if args.against is not None:
        alternate(__file__, without(sys.argv[1:], "--against", "--runs"), args.against, args.runs,
                  ("undo_p50_ms", "undo_p90_ms", "after_p50_ms", "take_p50_ms", "copy_p50_ms"))
        return
    rng = random.Random(11)
    root, ws, paths = workspace(args, "canal-bench-undo-", rng)
    try:
        store = CheckpointStore(root / "store", ws, CheckpointSettings(), KEYS, watch=True)
        print(f"canal from {Path(canal.__file__).parent}; {args.files} files; load {_loadavg()}")
        store.take(kind="run")
        takes, undos, afters, copies = [], [], [], []
        spare = root / "spare"
        for _ in range(args.rounds):
            path = rng.choice(paths)
            old = path.read_bytes()
            path.write_bytes(os.urandom(args.size))
            t0 = time.perf_counter()
            store.take(kind="run", command="write")
            t1 = time.perf_counter()
            store.undo()
            t2 = time.perf_counter()
            store.take(kind="run", command="after")
            t3 = time.perf_counter()
            if path.read_bytes() != old:
                sys.exit(f"bench_undo: undo did not restore {path}")
            spare.write_bytes(old)
            t4 = time.perf_counter()
            shutil.copyfile(spare, path)
            copies.append(time.perf_counter() - t4)
            takes.append(t1 - t0)
            undos.append(t2 - t1)
            afters.append(t3 - t2)
        store.close()
        print_rows([("checkpoint after a write", takes), ("undo of that write", undos),
                    ("checkpoint after the undo", afters), ("copy the file back (floor)", copies)])
        print(f"{args.rounds} rounds, every undo restored the file; load {_loadavg()}")
        if args.json:
            print(json.dumps({"undo_p50_ms": pct(undos, 0.5), "undo_p90_ms": pct(undos, 0.9),
                              "after_p50_ms": pct(afters, 0.5), "take_p50_ms": pct(takes, 0.5),
                              "copy_p50_ms": pct(copies, 0.5)}))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
