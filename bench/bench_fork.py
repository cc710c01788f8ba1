"""``canal fork`` of a workspace of many small files, beside ``cp -a`` of it (issue 33, finding 3).

    python bench/bench_fork.py                                   # 50,000 files of 200 bytes, 10 rounds
    python bench/bench_fork.py --keep                            # each round's forks kept into the next
    python bench/bench_fork.py --against /path/to/baseline/checkout --runs 2     # alternated runs

Root only (kernel overlayfs). The store the server keeps per project (``watch=True``) and its forks
(``ForkStore.create``: the checkpoint, the lower layer, the mount; not the fork's container). Each
round: 10 files rewritten, then a fork "after a change" (a new checkpoint: a new lower layer) and a
fork "from the same checkpoint" (its layer made already), each timed; then ``cp -a`` of the workspace,
timed in the same round. By default both forks are discarded at the end of the round; with ``--keep``
they stay until the next round's forks are made, so the layers below are in use when the next one is
made (before layers were stacked, that made every new layer whole). The last round's fork is
compared, file by file, with the project.

``--against`` runs this script in turns against a checkout of the code before a change and against this
one, and prints the baseline's figures over this one's (benchstats.alternate).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_checkpoints import generate
from bench_prune import KEYS
from benchstats import alternate, pct, print_rows, without

import canal
from canal.host.checkpoints import CheckpointSettings, CheckpointStore
from canal.host.forks import ForkStore


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _same_tree(a: Path, b: Path) -> bool:
    """Every path of ``a`` and ``b``, with its kind, mode and bytes (or link target)."""
    def walk(root: Path) -> dict[str, tuple[int, bytes]]:
        out = {}
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = os.path.join(folder, name)
                st = os.lstat(path)
                data = os.readlink(path).encode() if os.path.islink(path) else (
                    b"" if os.path.isdir(path) else Path(path).read_bytes())
                out[os.path.relpath(path, root)] = (st.st_mode, data)
        return out
    return walk(a) == walk(b)


def run_rounds(forks: ForkStore, ws: Path, paths: list[Path], args: argparse.Namespace,
               rng: random.Random) -> tuple[float, list[float], list[float], list[float]]:
    """The rounds: (the first fork, forks after a change, forks from the same checkpoint, copies)."""
    after: list[float] = []
    same: list[float] = []
    copies: list[float] = []
    first = 0.0
    previous: list[str] = []
    for i in range(args.rounds):
        for path in rng.sample(paths, 10):
            path.write_bytes(os.urandom(args.size))
        t0 = time.perf_counter()
        fork = forks.create(f"a{i}")
        t1 = time.perf_counter()
        forks.create(f"b{i}", from_id=fork.base)
        t2 = time.perf_counter()
        if i == 0:
            first = t1 - t0  # the first layer is whole, whatever the code: not in the figures
        else:
            after.append(t1 - t0)
            same.append(t2 - t1)
        for name in previous:
            forks.discard(name)
        previous = [f"a{i}", f"b{i}"] if args.keep else []
        if not args.keep:
            forks.discard(f"a{i}")
            forks.discard(f"b{i}")
        t3 = time.perf_counter()
        subprocess.run(["cp", "-a", str(ws), str(ws.parent / "copy")], check=True)
        copies.append(time.perf_counter() - t3)
        shutil.rmtree(ws.parent / "copy")
    name = previous[0] if previous else "check"
    if not previous:
        forks.create(name)
    if not _same_tree(forks.workspace(name), ws):
        sys.exit("bench_fork: a fork is not the project")
    return first, after, same, copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--size", type=int, default=200, help="bytes per file")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--keep", action="store_true", help="keep each round's forks into the next")
    parser.add_argument("--dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--against", type=Path, help="a checkout of the baseline, run in turns with this")
    parser.add_argument("--runs", type=int, default=1, help="with --against: runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_fork: forks need kernel overlayfs: run as root")
    if args.against is not None:
        alternate(__file__, without(sys.argv[1:], "--against", "--runs"), args.against, args.runs,
                  ("after_p50_ms", "same_p50_ms", "after_p90_ms", "same_p90_ms", "cp_p50_ms"))
        return
    rng = random.Random(3)
    root = Path(tempfile.mkdtemp(prefix="canal-bench-fork-", dir=args.dir))
    forks: ForkStore | None = None
    try:
        ws = root / "ws"
        ws.mkdir()
        paths = generate(ws, args.files, 0, rng=rng, file_bytes=args.size)
        store = CheckpointStore(root / "state" / "checkpoints", ws, CheckpointSettings(), KEYS, watch=True)
        forks = ForkStore(root / "state" / "forks", store)
        print(f"canal from {Path(canal.__file__).parent}; {args.files} files of {args.size} bytes; "
              f"{'kept' if args.keep else 'discarded'} each round; load {_loadavg()}")
        t0 = time.perf_counter()
        store.take(kind="run")
        print(f"first checkpoint {time.perf_counter() - t0:.2f} s")
        first, after, same, copies = run_rounds(forks, ws, paths, args, rng)
        print(f"first fork (a whole layer) {first * 1000:.0f} ms")
        print_rows([("fork after a change", after), ("fork, same checkpoint", same),
                    ("cp -a of the workspace", copies)], digits=1)
        print(f"{args.rounds} rounds, the fork checked against the project; load {_loadavg()}")
        if args.json:
            print(json.dumps({"after_p50_ms": pct(after, 0.5), "same_p50_ms": pct(same, 0.5),
                              "after_p90_ms": pct(after, 0.9), "same_p90_ms": pct(same, 0.9),
                              "cp_p50_ms": pct(copies, 0.5)}))
    finally:
        if forks is not None:
            for fork in forks.list():
                forks.discard(fork.name)
            forks.checkpoints.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
