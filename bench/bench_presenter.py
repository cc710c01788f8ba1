"""Presenter on a large spooled output vs ``cat`` of the same data to a file, side by side in one run.

    python bench/bench_presenter.py            # 1 GiB, 5 rounds
    python bench/bench_presenter.py --mib 64 --rounds 3
    python bench/bench_presenter.py --mib 32 --rounds 3 --redact   # and the run pipeline's redacted save

Each round runs ``cat SPOOL > FILE`` and the presenter (in a fresh subprocess, so its peak RSS is its
own) on the same spool file, alternating which goes first. The presenter copies the whole output to the
output folder (as ``cat`` does) and indexes it in the same pass. With ``--redact`` a third mode saves it
as the run pipeline does: every secret replaced, block by block, line numbers kept. Everything lives in a
temp folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import quantile as pct

REPO = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from canal.presenter import PresenterConfig, present
from canal.host.redact import Redactor
from canal.sandbox.result import CapturedOutput, ExecResult
spool, out, link = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "link"
redact_saved = Redactor(b"k" * 32).redact_keep_lines if sys.argv[3] == "redact" else None
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = ExecResult(CapturedOutput(size=spool.stat().st_size, path=spool), CapturedOutput.of(b""), 0, 1.0)
t0 = time.perf_counter()
p = present(result, config=PresenterConfig(link_spooled=link), output_dir=out, redact_saved=redact_saved)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "maxrss_kib": peak, "maxrss_start_kib": before,
                  "maxrss_imported_kib": imported, "lines": p.total_lines, "bytes": p.total_bytes,
                  "text_bytes": len(p.text.encode()), "output_file": p.output_file}))
"""


def make_spool(path: Path, mib: int) -> None:
    """Log-like lines of varied length, with some ANSI colour; 1 MiB block repeated."""
    parts, size, i = [], 0, 0
    while size < MIB:
        line = f"2024-05-01T12:{i % 60:02d}:{i % 59:02d}Z \x1b[32mINFO\x1b[0m worker-{i % 7} request {i} " \
               f"path=/api/v1/items/{i * 7919 % 100000} took={i % 997}ms {'x' * (i % 40)}\n"
        parts.append(line.encode())
        size += len(parts[-1])
        i += 1
    block = b"".join(parts)[:MIB]
    block = block[: block.rfind(b"\n") + 1].ljust(MIB, b"#")
    with path.open("wb") as fh:
        for _ in range(mib):
            fh.write(block)


def run_cat(spool: Path, dest: Path) -> float:
    t0 = time.perf_counter()
    with dest.open("wb") as fh:
        subprocess.run(["cat", str(spool)], stdout=fh, check=True)
    wall = time.perf_counter() - t0
    dest.unlink()
    return wall


def run_presenter(spool: Path, out_dir: Path, mode: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(spool), str(out_dir), mode], env=env,
                          capture_output=True, text=True, check=True)
    data: dict[str, float] = json.loads(proc.stdout)
    for f in out_dir.iterdir():
        f.unlink()
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="size of the output in MiB (default 1024)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--redact", action="store_true", help="also the redacted save (slow: 1.5-3.5 MiB/s)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="canal-bench-presenter-") as tmp:
        root = Path(tmp)
        spool, out_dir = root / "spool.out", root / "output"
        make_spool(spool, args.mib)
        modes = ("link", "copy", "redact") if args.redact else ("link", "copy")
        walls: dict[str, list[float]] = {m: [] for m in ("cat", *modes)}
        rss: dict[str, list[float]] = {m: [] for m in modes}
        last: dict[str, float] = {}
        for r in range(args.rounds):
            order = ["cat", *modes] if r % 2 == 0 else [*modes[::-1], "cat"]
            for mode in order:
                if mode == "cat":
                    walls["cat"].append(run_cat(spool, root / "cat.out"))
                    continue
                last = run_presenter(spool, out_dir, mode)
                walls[mode].append(last["wall_s"])
                rss[mode].append(last["maxrss_kib"] / 1024)
    cat_p50 = statistics.median(walls["cat"])
    print(f"output: {args.mib} MiB, {int(last['lines'])} lines, rounds: {args.rounds}")
    print(f"{'':26s} {'p50':>8s} {'p99':>8s} {'p50 ratio':>10s} {'peak RSS':>10s}")
    print(f"{'cat SPOOL > FILE':26s} {cat_p50:7.3f}s {pct(walls['cat'], 0.99):7.3f}s {'1.00x':>10s}")
    for mode in modes:
        p50 = statistics.median(walls[mode])
        print(f"{'presenter (' + mode + ' spool)':26s} {p50:7.3f}s {pct(walls[mode], 0.99):7.3f}s "
              f"{p50 / cat_p50:9.2f}x {max(rss[mode]):6.1f} MiB")
    start, imported = last["maxrss_start_kib"] / 1024, last["maxrss_imported_kib"] / 1024
    print(f"targets: wall p50 within 2x of cat, peak RSS under 64 MiB (whole process: interpreter "
          f"{start:.1f} MiB, after imports {imported:.1f} MiB)")
    print(f"text shown to the agent: {int(last['text_bytes'])} bytes")


if __name__ == "__main__":
    main()
