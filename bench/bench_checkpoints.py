"""Checkpoints on a generated 20,000-file, 500 MB workspace, side by side with the alternatives.

    python bench/bench_checkpoints.py                  # 30 rounds each
    python bench/bench_checkpoints.py --rounds 50 --files 20000 --mb 500 --dir /tmp

Measured in one run, rounds interleaved per case:
  canal, watched  ``CheckpointStore.take`` on the store the server keeps per project (``watch=True``):
                  its inotify watch names the folders where something happened, and only those are
                  listed again (nothing at all when nothing happened); it still walks everything once
                  a minute and whenever the watch cannot vouch (the count and the reasons are printed)
  canal, warm     the same with no watch: one store object, every checkpoint walks the workspace (the
                  in-process Python API)
  canal, cold     a new store object each round: the stat cache is read from disk (a process per call)
  shadow git      ``git --git-dir=<outside> --work-tree=<ws> add -A`` + ``write-tree`` (index = stat cache)
  stat walk       ``os.walk`` + ``lstat`` of every entry and nothing else: the floor any stat-based
                  method pays
for two cases: nothing changed, and 10 files rewritten (25 KiB each) once a round, before every method
runs once (so each sees those 10 files changed since its previous run; the order turns each round). The
first checkpoint (every byte read, hashed and copied) is timed once for canal and for git.

Forks (``--fork-rounds``, root only: kernel overlayfs), side by side in the same run with ``cp -a`` of
the same tree (the workspace and its gitignored ``.venv`` of ``--venv-mb`` MB, which a fork carries as
hard links in a lower layer of its own, forks/ignored.py): ``ForkStore.create`` = a checkpoint + the
lower layer (hard links to stored objects, stacked on the last layer: made once per checkpoint, so
measured both after a change and again from the same checkpoint) + the ignored layer + the overlay
mount, on the watched store (as the server makes forks). The code before a change is compared by
bench_fork.py ``--against`` (50,000 small files). Starting the fork's container is not included
(``docker run``, see the sandbox benchmarks).

The load average is printed at the start and at the end: the figures mean little without it.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from canal.host.forks import ForkStore

KEYS = Keys("bench", {"bench": b"b" * 32})
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}


def generate(root: Path, files: int, total_mb: int, seed: int = 1, *, rng: random.Random | None = None,
             file_bytes: int | None = None) -> list[Path]:
    """``files`` files in 500 folders nested up to ~6 deep, ``total_mb`` MB of incompressible bytes
    (or ``file_bytes`` each); ``rng``: the caller's, to draw from afterwards (else one of ``seed``)."""
    rng = rng or random.Random(seed)
    dirs = [root]
    for i in range(500):
        d = rng.choice(dirs[: 1 + i // 3]) / f"d{i}"
        d.mkdir(parents=True, exist_ok=True)
        dirs.append(d)
    size = file_bytes if file_bytes is not None else total_mb * 1_000_000 // files
    pool = os.urandom(1 << 20)
    paths = []
    for i in range(files):
        path = dirs[i % len(dirs)] / f"f{i}.txt"
        off = rng.randrange(0, len(pool) - size)
        path.write_bytes(pool[off:off + size])
        paths.append(path)
    return paths


def generate_venv(ws: Path, total_mb: int, file_kb: int = 30) -> int:
    """A gitignored ``.venv`` of ``total_mb`` MB in ``file_kb`` KB files, 50 to a folder (site-packages)."""
    (ws / ".gitignore").write_text(".venv/\n")
    count = total_mb * 1000 // file_kb
    pool = os.urandom(1 << 20)
    for i in range(count):
        folder = ws / ".venv" / "lib" / "site-packages" / f"pkg{i // 50}"
        if i % 50 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        off = (i * 7919) % (len(pool) - file_kb * 1000)
        (folder / f"m{i}.py").write_bytes(pool[off:off + file_kb * 1000])
    return count


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def pct(xs: list[float]) -> str:
    s = sorted(xs)
    return f"p50 {statistics.median(s):7.1f} ms   p90 {s[int(len(s) * 0.9)]:7.1f} ms"


def git(gitdir: Path, ws: Path, *args: str) -> None:
    subprocess.run(["git", f"--git-dir={gitdir}", f"--work-tree={ws}", *args], check=True, env=GIT_ENV,
                   stdout=subprocess.DEVNULL)


def shadow_git(gitdir: Path, ws: Path) -> None:
    git(gitdir, ws, "add", "-A")
    git(gitdir, ws, "write-tree")


def stat_walk(ws: Path) -> int:
    n = 0
    for folder, dirs, files in os.walk(ws):
        for name in dirs + files:
            os.lstat(os.path.join(folder, name))
            n += 1
    return n


def fork_rows(root: Path, ws: Path, store: CheckpointStore, paths: list[Path], rounds: int,
              rng: random.Random) -> None:
    forks = ForkStore(root / "forks", store)
    rows: dict[str, list[float]] = {}
    for i in range(rounds):
        copy = root / "copy"
        argv = ["cp", "-a", str(ws), str(copy)]
        rows.setdefault("cp -a of the workspace", []).append(timed(partial(subprocess.run, argv, check=True)))
        shutil.rmtree(copy)
        for path in rng.sample(paths, 10):  # a new checkpoint: its lower layer is made
            path.write_bytes(os.urandom(25_000))
        first, second = f"a{i}", f"b{i}"
        rows.setdefault("fork after a change", []).append(timed(partial(forks.create, first)))
        base = forks.get(first).base
        again = partial(forks.create, second, from_id=base)
        rows.setdefault("fork, same checkpoint", []).append(timed(again))
        forks.discard(first)
        forks.discard(second)
    for label, xs in rows.items():
        print(f"{label:<44} {pct(xs)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--fork-rounds", type=int, default=10)
    parser.add_argument("--venv-mb", type=int, default=300, help="a gitignored .venv a fork carries")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-checkpoints-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        t0 = time.perf_counter()
        paths = generate(ws, args.files, args.mb)
        made = time.perf_counter() - t0
        venv = generate_venv(ws, args.venv_mb) if args.venv_mb else 0
        print(f"workspace: {args.files} files, {args.mb} MB, 500 folders (made in {made:.1f} s); "
              f"gitignored .venv: {venv} files, {args.venv_mb} MB")
        settings = CheckpointSettings(max_workspace_bytes=4 << 30)
        state = root / "state"

        def store() -> CheckpointStore:
            return CheckpointStore(state, ws, settings, KEYS)

        warm = store()
        watched = CheckpointStore(root / "state-watched", ws, settings, KEYS, watch=True)
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        gitdir = root / "shadow.git"
        subprocess.run(["git", "init", "-q", "--bare", str(gitdir)], check=True, env=GIT_ENV)
        git(gitdir, ws, "config", "core.bare", "false")
        print(f"first checkpoint   canal {timed(lambda: warm.take(kind='manual')):8.0f} ms   "
              f"watched {timed(lambda: watched.take(kind='manual')):8.0f} ms   "
              f"shadow git {timed(lambda: git(gitdir, ws, 'add', '-A')):8.0f} ms")
        rng = random.Random(2)
        rows: dict[str, list[float]] = {}
        walks: list[str] = []  # the watched store's checkpoints that walked everything, and why

        def watched_take() -> None:
            watched.take(kind="manual")
            if watched.watch_note:
                walks.append(watched.watch_note)

        cases: list[tuple[str, Callable[[], object]]] = [
            ("canal, watched", watched_take),
            ("canal, warm", lambda: warm.take(kind="manual")),
            ("canal, cold", lambda: store().take(kind="manual")),
            ("shadow git", partial(shadow_git, gitdir, ws)),
            ("stat walk", lambda: stat_walk(ws))]
        for case in ("nothing changed", "10 files changed"):
            for i in range(args.rounds):
                if case != "nothing changed":  # once a round: each store sees these 10 since its last
                    for path in rng.sample(paths, 10):
                        path.write_bytes(os.urandom(25_000))
                # the order turns each round: the first to run after the writes pays for their flush
                for name, fn in cases[i % len(cases):] + cases[:i % len(cases)]:
                    rows.setdefault(f"{case:<17} {name}", []).append(timed(fn))
        for label, xs in rows.items():
            print(f"{label:<32} {pct(xs)}")
        print(f"the watched store walked everything in {len(walks)} of {2 * args.rounds} checkpoints"
              + (f" ({', '.join(sorted(set(walks)))})" if walks else ""))
        if os.geteuid() == 0 and args.fork_rounds:
            fork_rows(root, ws, watched, paths, args.fork_rounds, rng)
        watched.close()
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        objects = sum(f.stat().st_size for f in (state / "objects").rglob("*") if f.is_file())
        print(f"store: {len(warm.list())} checkpoints kept, objects {objects / 1e6:.0f} MB "
              f"(workspace {args.mb} MB + the rewritten files)")
        shutil.rmtree(ws)


if __name__ == "__main__":
    main()
