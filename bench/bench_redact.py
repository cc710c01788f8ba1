"""Redaction speed on realistic command output, rule sets side by side in one run.

    python bench/bench_redact.py                                  # built-in rules, 10 kB and 100 kB
    python bench/bench_redact.py --rules-file /tmp/gitleaks.toml  # also that file alone and added
    python bench/bench_redact.py --stream --baseline 1c3cd60      # big outputs, today's vs that commit's

``--stream`` saves outputs the way the run pipeline saves a spooled output (``clean_text_stream``,
1 MiB blocks, ``redact_keep_lines``): 1 MB, 32 MiB and 64 MiB of log-like text and 8 MiB of base64,
with today's redactor and, with ``--baseline REV``, that commit's loaded beside it
(``redact_baseline.py``), interleaved (the order alternates each round). It prints p50/p90/max per
case, MiB/s, the ratio to the baseline, the load average before and after, and each redactor's
peak memory above idle on the largest text (a fresh process each, ``ru_maxrss``).

Each round redacts the same text with every case, alternating the order of the cases each round.
The text is built from the kinds of output an agent's commands print (``ls -la``, ``git log``,
``pytest``, ``pip install`` with sha256 digests, ``docker ps``, JSON with UUIDs, ``env``), with two
fake secrets in it, deterministic for a given size. A case is one ``Redactor`` built once (rules
compiled once, as in a process) and called on the whole text.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from redact_stream import stream_bench  # noqa: E402

from canal.host.redact import Detector, Redactor  # noqa: E402
from canal.host.redact import rules as rules_mod  # noqa: E402

SECRETS = ("GITHUB_TOKEN=ghp_4r6bSr0pFBOPCWBRDFOxEzf5FJtRBZRAJyu5",
           "DATABASE_URL=postgres://admin:S3cr3t-3XkjNHFZxn@db.internal:5432/app")


def _block(rng: random.Random, i: int) -> str:
    h = hashlib.sha1(str(i).encode()).hexdigest()
    d = hashlib.sha256(str(i).encode()).hexdigest()
    u = uuid.UUID(int=rng.getrandbits(128))
    kinds = [
        f"-rw-r--r-- 1 agent agent {rng.randint(10, 99999):>6} Nov 30 07:{i % 60:02d} src/pkg/module_{i}.py\n"
        f"drwxr-xr-x 2 agent agent   4096 Nov 30 07:{i % 60:02d} tests/unit/area_{i}\n",
        f"commit {h}\nAuthor: Dev Person <dev{i}@example.com>\nDate:   Mon Nov 30 07:18:13 2026\n\n"
        f"    fix: handle empty config in loader ({h[:7]})\n\n",
        f"tests/unit/test_mod_{i}.py::test_case_{i} PASSED                                [{i % 100:3d}%]\n",
        f"  Downloading package_{i}-1.{i % 9}.0-py3-none-any.whl (45 kB)\n"
        f"  Hash: sha256:{d}\n",
        f"{h[:12]}   python:3.12-slim   \"python -m http.server\"   {i % 9} minutes ago   Up   app_{i}\n",
        f'{{"id": "{u}", "name": "item-{i}", "status": "ok", "etag": "{d[:32]}", "count": {i}}}\n',
        f"PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/home/agent\nLANG=C.UTF-8\nHOSTNAME={h[:12]}\n",
        f"Traceback (most recent call last):\n  File \"/workspace/app/main_{i}.py\", line {i % 300}, in run\n"
        f"    result = handler(request)\nKeyError: 'user_{i}'\n",
    ]
    return kinds[i % len(kinds)]


def make_output(size: int) -> str:
    rng, parts, total, i = random.Random(size), [], 0, 0
    while total < size:
        parts.append(_block(rng, i))
        total += len(parts[-1])
        i += 1
    text = "".join(parts)
    third = len(text) // 3
    return f"{text[:third]}\n{SECRETS[0]}\n{text[third:2 * third]}\n{SECRETS[1]}\n{text[2 * third:]}"[:size]


def cases(rules_file: Path | None) -> dict[str, Callable[[str], str]]:
    out: dict[str, Callable[[str], str]] = {"built-in": Redactor(b"k" * 32)}
    if rules_file is not None:
        extra = rules_mod.parse_rules(rules_file.read_text(encoding="utf-8"))
        out[f"{rules_file.name} only"] = Redactor(b"k" * 32, Detector(extra))
        merge = getattr(rules_mod, "merge_rules", None)
        if merge is not None:
            out[f"built-in + {rules_file.name}"] = Redactor(
                b"k" * 32, Detector(merge(rules_mod.builtin_rules(), extra)))
    return out


def run(size: int, rounds: int, funcs: dict[str, Callable[[str], str]]) -> None:
    text = make_output(size)
    times: dict[str, list[float]] = {name: [] for name in funcs}
    names = list(funcs)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            t0 = time.perf_counter()
            redacted = funcs[name](text)
            times[name].append((time.perf_counter() - t0) * 1000)
            if any(s.split("=", 1)[1] in redacted for s in SECRETS[:1]):
                sys.exit(f"{name}: a secret survived")
    base = statistics.median(times[names[0]])
    print(f"{len(text.encode())} bytes of command output, {rounds} rounds")
    print(f"{'case':32} {'p50 ms':>8} {'p99 ms':>8} {'p50 / ' + names[0]:>16}")
    for name in names:
        ts = sorted(times[name])
        p50, p99 = statistics.median(ts), ts[min(len(ts) - 1, int(len(ts) * 0.99))]
        print(f"{name:32} {p50:8.2f} {p99:8.2f} {p50 / base:15.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--sizes", default="10000,100000", help="bytes, comma separated")
    parser.add_argument("--rules-file", type=Path, help="a gitleaks-format TOML to compare")
    parser.add_argument("--stream", action="store_true", help="big outputs through clean_text_stream")
    parser.add_argument("--baseline", help="with --stream: a commit whose redactor runs beside today's")
    parser.add_argument("--stream-sizes", default="1mb,32mib,64mib,b64:8mib",
                        help="with --stream: texts to run (1mb, 32mib, b64:8mib ...)")
    parser.add_argument("--memory-probe", nargs=2, metavar=("WHICH", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stream or args.memory_probe:
        stream_bench(args.rounds, args.stream_sizes, args.baseline, args.memory_probe)
        return
    funcs = cases(args.rules_file)
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args.rounds, funcs)
        print()


if __name__ == "__main__":
    main()
