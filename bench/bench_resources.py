"""A ``Canal``'s life in-process, as one ``canal`` command in-process lives it: made, its settings read,
its policy compiled, its checkpoint store opened, its audit log written once, closed. Issue 37 made
what it builds once a resources object it owns (``Owned``) instead of a process-global switch; this is
the cost of that life, side by side with the code before.

    python bench/bench_resources.py --rounds 200
    python bench/bench_resources.py --against /path/to/baseline/checkout --turns 3

No Docker: the policy is compiled from the standard profile and a project rule file, the checkpoint
store is opened (no checkpoint is taken). ``--against`` runs this script in turns against a checkout of
the code before (``PYTHONPATH`` pointed at it) and this one, and prints the medians of each side's runs.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchstats import alternate, pct, without


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--against", type=Path, help="a checkout of the baseline, run in turns with this")
    parser.add_argument("--turns", type=int, default=3, help="with --against: runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against is not None:
        alternate(__file__, without(sys.argv[1:], "--against", "--turns"), args.against, args.turns,
                  ("p50_ms", "p90_ms", "p99_ms"))
        return
    with tempfile.TemporaryDirectory(prefix="canal-bench-resources-") as tmp:
        root = Path(tmp)
        os.environ.update(CANAL_STATE_DIR=str(root / "state"), CANAL_CONFIG_DIR=str(root / "config"),
                          CANAL_KEY=base64.b64encode(b"k" * 32).decode())
        folder = root / "project"
        (folder / "policy").mkdir(parents=True)
        (folder / "policy" / "extra.yaml").write_text("name: extra\ndefault: allow\nrules: []\n")
        measure(folder, args)


def measure(folder: Path, args: argparse.Namespace) -> None:
    import canal
    from canal import Canal
    from canal.runtime.settings.config import CanalConfig

    config = CanalConfig.model_validate({"policy": {"profile": "standard", "files": ["policy/extra.yaml"]}})
    before = _loadavg()
    times = []
    for n in range(args.rounds + 10):
        t0 = time.perf_counter()
        with Canal(folder, config=config) as api:
            services = getattr(api, "_services", None) or api.services  # the code before: public
            api.policy  # noqa: B018
            services.checkpoints  # noqa: B018
            services.audit.append("bench.life", {"n": n}, actor="bench")
        if n >= 10:  # the first ones import and warm the caches
            times.append(time.perf_counter() - t0)
    figures = {"p50_ms": pct(times, 0.5), "p90_ms": pct(times, 0.9), "p99_ms": pct(times, 0.99)}
    print(f"canal from {Path(canal.__file__).parent}; {args.rounds} lives; load {before} -> {_loadavg()}")
    print("  ".join(f"{k} {v:.2f}" for k, v in figures.items()))
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
