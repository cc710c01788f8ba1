"""``bench_redact.py --stream``: big outputs saved through the secret detector, old and new side by side."""

from __future__ import annotations

import base64
import io
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchstats import quantile

from canal.host.redact import Redactor
from canal.presenter.textclean import clean_text_stream

REPO = Path(__file__).resolve().parent.parent
CHUNK = 1024 * 1024  # the presenter's default block
MIB = 1024 * 1024
UNITS = {"mib": MIB, "mb": 1000 * 1000, "kib": 1024, "kb": 1000}
Saver = Callable[[bytes], bytes]


def _size(text: str) -> int:
    for unit, factor in UNITS.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def make_data(spec: str) -> bytes:
    from bench_redact import make_output

    if spec.startswith("b64:"):
        size = _size(spec[4:])
        return base64.encodebytes(random.Random(size).randbytes(size * 3 // 4))[:size]
    return make_output(_size(spec)).encode()


def saver(redact: Callable[[str], str]) -> Saver:
    def save(data: bytes) -> bytes:
        return b"".join(clean_text_stream(io.BytesIO(data), redact, CHUNK))

    return save


def redact_functions(baseline: str | None) -> dict[str, Callable[[str], str]]:
    out: dict[str, Callable[[str], str]] = {"new": Redactor(b"k" * 32).redact_keep_lines}
    if baseline:
        from redact_baseline import load

        out[f"old ({baseline})"] = load(REPO, baseline).Redactor(b"k" * 32).redact_keep_lines
    return out


def redactors(baseline: str | None) -> dict[str, Saver]:
    return {name: saver(f) for name, f in redact_functions(baseline).items()}


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_case(spec: str, rounds: int, savers: dict[str, Saver]) -> None:
    data = make_data(spec)
    names = list(savers)
    times: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    outputs: dict[str, bytes] = {}
    before = load_average()
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            t0, c0 = time.perf_counter(), time.process_time()
            outputs[name] = savers[name](data)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    mib, lines = len(data) / MIB, data.count(b"\n")
    print(f"{spec}: {len(data)} bytes ({mib:.2f} MiB), {lines} lines, {rounds} rounds; "
          f"load average {before} -> {load_average()}")
    print(f"  {'redactor':22} {'p50 s':>9} {'p90 s':>9} {'max s':>9} {'MiB/s':>8} {'p50 / new':>10}"
          f" {'CPU p50 s':>10} {'CPU MiB/s':>10}")
    base = quantile(times[names[0]], 0.5)
    for name in names:
        p50, cpu50 = quantile(times[name], 0.5), quantile(cpu[name], 0.5)
        print(f"  {name:22} {p50:9.3f} {quantile(times[name], 0.9):9.3f} {max(times[name]):9.3f} "
              f"{mib / p50:8.1f} {p50 / base:9.2f}x {cpu50:10.3f} {mib / cpu50:10.1f}")
    if len(set(outputs.values())) != 1:
        print("  outputs differ between redactors")
    print()


def _high_water() -> float:
    """This process's peak RSS in KiB (``VmHWM``: unlike ``ru_maxrss``, not inherited across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_probe(which: str, path: str, baseline: str | None) -> None:
    """In a fresh process: peak RSS above what the imports and the rules cost, saving one file."""
    functions = redact_functions(None if which == "new" else baseline)
    redact = functions["new"] if which == "new" else functions[f"old ({baseline})"]
    redact("warm up: token=abc123def456 " + base64.b64encode(os.urandom(60)).decode())
    idle = _high_water()
    with open(path, "rb") as src, open(os.devnull, "wb") as sink:
        for block in clean_text_stream(src, redact, CHUNK):
            sink.write(block)
    peak = _high_water()
    print(f"{(peak - idle) / 1024:.1f} {idle / 1024:.1f}")


def memory(spec: str, savers: dict[str, Saver], baseline: str | None) -> None:
    data = make_data(spec)
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(data)
        f.flush()
        for name in savers:
            which = "new" if name == "new" else "old"
            extra = ["--baseline", baseline] if baseline else []
            out = subprocess.run([sys.executable, str(REPO / "bench" / "bench_redact.py"),
                                  "--memory-probe", which, f.name, *extra],
                                 check=True, capture_output=True, text=True).stdout.split()
            print(f"  peak RSS saving {spec} ({name}): {out[0]} MiB above idle ({out[1]} MiB idle)")


def stream_bench(rounds: int, sizes: str, baseline: str | None, probe: list[str] | None) -> None:
    if probe:
        memory_probe(probe[0], probe[1], baseline)
        return
    savers = redactors(baseline)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, rounds {rounds}, baseline {baseline}")
    specs = sizes.split(",")
    for spec in specs:
        run_case(spec, rounds, savers)
    logs = [s for s in specs if not s.startswith("b64:")]
    if logs:
        memory(max(logs, key=_size), savers, baseline)
