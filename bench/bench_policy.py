"""Policy decision latency: load time, then per-command p50/p99 for the shipped profiles and a generated
100-rule policy, side by side with the baselines (parse alone; cel-python's interpreter alone, i.e.
the fast path off; decision cache on).

Run: python bench/bench_policy.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from canal.policy import Policy, build_policy, load_policy  # noqa: E402
from canal.policy.shell import parse  # noqa: E402
from canal.policy.shell.syntax import bash_n  # noqa: E402

PROGRAMS = ["ls", "cat", "git", "rm", "grep", "find", "sed", "curl", "python3", "npm", "make", "docker",
            "kubectl", "tar", "cp", "mv", "chmod", "echo", "head", "jq"]


def commands() -> list[str]:
    """Every command of the corpora: benign, adversarial, Canal's findings and both disguise files."""
    corpus = ROOT / "tests" / "data" / "corpus"
    adv = yaml.safe_load((corpus / "policy-adversarial.yaml").read_text())
    ben = yaml.safe_load((corpus / "policy-benign.yaml").read_text())
    found = yaml.safe_load((corpus / "canal-findings.yaml").read_text())
    pairs = [*yaml.safe_load((corpus / "policy-disguises.yaml").read_text()),
             *yaml.safe_load((corpus / "canal-disguises.yaml").read_text())]
    return ([c["cmd"] for c in ben] + [c["cmd"] for group in adv.values() for c in group]
            + [c["cmd"] for group in found.values() for c in group]
            + [p[k] for p in pairs for k in ("canonical", "disguised")])


def generated_policy(path: Path, per_program: int = 5) -> Path:
    """100 rules indexed by program: ``per_program`` rules on each of the 20 PROGRAMS the corpus uses,
    the rest on programs of their own (tool-NN), as in policies with one rule per tool."""
    rules = []
    for i in range(100):
        program = PROGRAMS[i % len(PROGRAMS)] if i < per_program * len(PROGRAMS) else f"tool-{i:02d}"
        rules.append({
            "id": f"gen-{i:03d}", "decision": ["confirm", "deny"][i % 2], "programs": [program],
            "expression": f'"zz{i}" in long_flags || positionals.exists(p, p == "never-{i}")',
            "message": f"generated rule {i}",
            "examples": {"match": [f"{program} --zz{i}"], "not_match": [f"{program} x"]},
        })
    path.write_text(yaml.safe_dump({"version": 1, "name": "gen100", "default": "allow", "rules": rules}))
    return path


def timed(fn: Callable[[str], object], cmds: list[str], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        for cmd in cmds:
            start = time.perf_counter()
            fn(cmd)
            out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def row(name: str, values: list[float], base: float) -> None:
    p50 = statistics.median(values)
    print(f"{name:<54} p50 {p50:8.3f} ms   p99 {pct(values, 0.99):8.3f} ms   x{p50 / base:7.1f} vs parse")


def uncached(policy: Policy, fast: bool = True) -> Callable[[str], object]:
    """Decision cache off; ``fast=False`` evaluates every rule with cel-python's interpreter (the
    engine before the fast path), for a side-by-side comparison."""
    def run(cmd: str) -> object:
        policy.clear_cache()
        policy.fast_eval = fast
        try:
            return policy.decide(cmd)
        finally:
            policy.fast_eval = True
    return run


def pipeline_refusals(huge: list[str]) -> list[float]:
    """The whole refusal path (decision, redaction, audit record, error text) over the fake backend."""
    import os

    from canal import Canal
    from canal.runtime.settings.config import CanalConfig
    from canal.sandbox.fake import FakeBackend

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CANAL_STATE_DIR"] = str(Path(tmp) / "state")
        os.environ["CANAL_CONFIG_DIR"] = str(Path(tmp) / "config")
        project = Path(tmp) / "project"
        project.mkdir()
        canal = Canal(project, config=CanalConfig(), backend=FakeBackend())
        canal.run("true")
        return timed(lambda c: canal.run(c), huge, 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    rounds = ap.parse_args().rounds
    cmds = commands()
    start = time.perf_counter()
    standard = load_policy("standard")
    cold = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    strict = load_policy("strict")
    strict_ms = (time.perf_counter() - start) * 1000
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        gen = build_policy([generated_policy(Path(tmp) / "gen.yaml")])
        gen_ms = (time.perf_counter() - start) * 1000
        wide = build_policy([generated_policy(Path(tmp) / "wide.yaml", per_program=1)])
    print(f"load: standard (cold process, {len(standard.rules)} rules) {cold:.0f} ms; strict "
          f"({len(strict.rules)} rules) {strict_ms:.0f} ms; generated ({len(gen.rules)} rules, "
          f"200 examples) {gen_ms:.0f} ms")
    print(f"{len(cmds)} corpus commands x {rounds} rounds; bash -n answers are memoised after round 1")
    for cmd in cmds:  # warm bash -n memo so rows compare the engine, not the subprocess
        bash_n(cmd)
    base = statistics.median(timed(lambda c: parse(c), cmds, rounds))
    row("baseline: parse only (tree-sitter + facts in)", timed(lambda c: parse(c), cmds, rounds), base)
    for name, policy in (("standard", standard), ("strict", strict), ("generated 100 (5/program)", gen),
                         ("generated 100 (1/program)", wide)):
        row(f"{name}, cache off, interpreter only", timed(uncached(policy, fast=False), cmds, rounds), base)
        row(f"{name}, cache off, fast path", timed(uncached(policy), cmds, rounds), base)
    gen.clear_cache()
    row("generated 100 (5/program), cache on", timed(gen.decide, cmds, rounds), base)
    huge = ["echo " + "x" * 2_000_000 + f" {i}" for i in range(rounds * 4)]
    refused = timed(uncached(standard), huge, 1)
    print(f"{'2 MB command refused (standard, cache off)':<54} p50 {statistics.median(refused):8.3f} ms   "
          f"max {max(refused):8.3f} ms   (target < 50 ms)")
    through = pipeline_refusals(huge[:8])
    label = "2 MB command refused through Canal.run (fake backend)"
    print(f"{label:<54} p50 {statistics.median(through):8.3f} ms   max {max(through):8.3f} ms"
          "   (policy, audit record, error text)")
    bash_n.cache_clear()
    first = timed(uncached(gen), cmds, 1)
    row("generated 100 (5/program), cold, no bash -n memo", first, base)


if __name__ == "__main__":
    main()
