"""Benchmark (issue 30): many projects on one host, all sharing one ``CANAL_STATE_DIR``.

    python bench/bench_many_projects.py                          # 8 projects x 8 agents x 100 commands
    python bench/bench_many_projects.py --projects 2 --agents 2 --commands 5

N projects (``--projects``), M concurrent agents per project (``--agents``), K commands per agent
(``--commands``), every project's state under one ``CANAL_STATE_DIR`` (the per-project layout:
``<state>/projects/<name>-<hash>/``), one Canal server for all of them, in a temporary runtime folder.
Four phases, one after the other, so machine load hits each in turn:

1. API: N x M threads, each with its own ``Canal.connect(project)``, each running
   ``echo api-p{i}-a{j}-c{k}``; a command is lost when it raised, its status is not ``ok`` or its output
   lacks its token;
2. baseline: the same number of ``docker exec CONTAINER echo base1-...`` calls with the same concurrency
   (N x M threads) on one plain container of ``canal/sandbox:0.1.0`` with the sandbox's hardening flags;
3. CLI: N x M threads, each running ``canal -C PROJECT run -- 'echo cli-p{i}-a{j}-c{k}'`` processes (the
   venv's entry point); lost when its exit status is not 0 or its stdout lacks its token;
4. baseline again (``base2-...``), beside the CLI phase.

Then, for every project: ``canal audit verify`` (exit 0 expected) and ``canal audit show --json --event
run.``: each command of the API and CLI phases must have a ``run.started`` record with its exact command
and a ``run.completed`` record pointing at it with exit code 0. Commands on one sandbox are serialised by
the server (one shell per sandbox), so a project's M agents queue on its one default sandbox; the
baseline's ``docker exec`` calls run in parallel in their one container. Both sides' containers are
limited to one CPU (the sandbox default), on a host of two.

At the end: ``canal down`` per project, the server stopped, the baseline container and the temporary
folders removed. The last lines are a markdown summary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchserver import stop_server
from benchstats import pct

CANAL = str(Path(sys.executable).parent / "canal")
IMAGE = "canal/sandbox:0.1.0"
# the sandbox's default hardening (canal/sandbox: read-only root, no capabilities, limits), as flags
HARDENING = ["--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only",
             "--tmpfs", "/tmp:rw,nosuid,nodev,size=256m,mode=1777", "--tmpfs",
             "/home/agent:rw,nosuid,nodev,size=64m,mode=0700,uid=0,gid=0", "--memory", "1g",
             "--memory-swap", "1g", "--cpus", "1", "--pids-limit", "256", "--ipc", "private",
             "--shm-size", "64m", "--user", "0:0"]


@dataclass
class Phase:
    name: str
    samples: list[float] = field(default_factory=list)
    attempted: int = 0
    lost: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0
    load_before: float = 0.0
    load_after: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, took: float, error: str | None) -> None:
        with self.lock:
            self.attempted += 1
            if error is None:
                self.samples.append(took)
            else:
                self.lost += 1
                self.errors[error[:300]] += 1

    @property
    def succeeded(self) -> int:
        return len(self.samples)


def loadavg() -> float:
    return os.getloadavg()[0]


def token(phase: str, i: int, j: int, k: int) -> str:
    return f"{phase}-p{i}-a{j}-c{k}"


def run_phase(name: str, projects: int, agents: int, commands: int,
              agent: Callable[[Phase, int, int], None]) -> Phase:
    """N x M threads at once, each calling ``agent(phase, i, j)`` (which runs its K commands)."""
    phase = Phase(name)
    phase.load_before = loadavg()
    threads = [threading.Thread(target=agent, args=(phase, i, j), name=f"{name}-{i}-{j}", daemon=True)
               for i in range(projects) for j in range(agents)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    phase.wall_s = time.perf_counter() - start
    phase.load_after = loadavg()
    expected = projects * agents * commands
    if phase.attempted != expected:  # a thread died before counting: the rest are lost too
        phase.errors[f"{expected - phase.attempted} commands never attempted"] += 1
        phase.lost += expected - phase.attempted
        phase.attempted = expected
    return phase


def api_agent(folders: list[Path], commands: int) -> Callable[[Phase, int, int], None]:
    from canal import Canal

    def agent(phase: Phase, i: int, j: int) -> None:
        client = Canal.connect(folders[i])  # one client object per agent thread
        for k in range(commands):
            want = token("api", i, j, k)
            start = time.perf_counter()
            error: str | None = None
            try:
                result = client.run(f"echo {want}")
                if result.status != "ok":
                    error = f"status {result.status}: {result.text.splitlines()[0] if result.text else ''}"
                elif want not in result.output:
                    error = f"output without its token: {result.output[:80]!r}"
            except Exception as exc:  # a lost command, counted with its error
                error = f"{type(exc).__name__}: {exc}"
            phase.record(time.perf_counter() - start, error)
    return agent


def process_agent(label: str, argv: Callable[[int, str], list[str]],
                  commands: int) -> Callable[[Phase, int, int], None]:
    """An agent that runs each command as a process, ``argv(project index, token)``: the CLI or docker."""
    def agent(phase: Phase, i: int, j: int) -> None:
        for k in range(commands):
            want = token(label, i, j, k)
            start = time.perf_counter()
            error: str | None = None
            try:
                done = subprocess.run(argv(i, want), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                      check=False, timeout=600)
                if done.returncode != 0:
                    error = f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[:200]}"
                elif want not in done.stdout:
                    error = f"stdout without its token: {done.stdout[:80]!r}"
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            phase.record(time.perf_counter() - start, error)
    return agent


def cli_agent(folders: list[Path], commands: int) -> Callable[[Phase, int, int], None]:
    return process_agent("cli", lambda i, want: [CANAL, "-C", str(folders[i]), "run", "--", f"echo {want}"],
                         commands)


def docker_agent(container: str, label: str, commands: int) -> Callable[[Phase, int, int], None]:
    return process_agent(label, lambda _, want: ["docker", "exec", container, "echo", want], commands)


def canal(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CANAL, "-C", str(folder), *args], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, check=False, timeout=timeout)


@dataclass
class AuditCheck:
    project: str
    verify_rc: int
    verify_line: str
    expected: int
    started: int
    completed: int
    records: int
    other: Counter[str] = field(default_factory=Counter)  # other outcomes of this bench's commands

    @property
    def missing(self) -> int:
        return self.expected - min(self.started, self.completed)


def check_audit(folder: Path, i: int, phases: tuple[str, ...], agents: int, commands: int) -> AuditCheck:
    """``canal audit verify``; then this bench's commands in ``canal audit show --json --event run.``: each
    needs a ``run.started`` with its exact command and a ``run.completed`` of it with exit code 0."""
    verify = canal(folder, "audit", "verify")
    shown = canal(folder, "audit", "show", "--json", "--event", "run.")
    wanted = {f"echo {token(phase, i, j, k)}" for phase in phases
              for j in range(agents) for k in range(commands)}
    started: dict[str, str] = {}  # record id -> command, for the wanted commands
    completed: set[str] = set()
    other: Counter[str] = Counter()
    try:
        rows = json.loads(shown.stdout)["records"]
    except (json.JSONDecodeError, KeyError):
        rows = []
        print(f"  {folder.name}: audit show --json failed (exit {shown.returncode}): {shown.stderr[:300]}")
    for row in rows:
        data = row.get("data") or {}
        if row.get("event") == "run.started" and data.get("command") in wanted:
            started[row["id"]] = data["command"]
    for row in rows:
        data = row.get("data") or {}
        if data.get("started") not in started:
            continue
        if row.get("event") == "run.completed" and data.get("exit_code") == 0:
            completed.add(started[data["started"]])
        else:
            other[f"{row.get('event')} exit {data.get('exit_code')} reason {data.get('reason')}"] += 1
    line = (verify.stdout or verify.stderr).strip().splitlines()
    return AuditCheck(folder.name, verify.returncode, line[0] if line else "", len(wanted),
                      len(set(started.values())), len(completed), len(rows), other)


def server_status() -> tuple[int | None, str]:
    done = subprocess.run([CANAL, "server", "status", "--json"], capture_output=True, text=True, check=False)
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None, "?"
    return data.get("pid"), str(data.get("build"))


def make_project(root: Path, name: str, workspace: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "canal.yaml").write_text(f"workspace: {workspace}\n")
    if os.geteuid() == 0:  # the sandbox user (1000) owns it, as on a developer's machine
        for path in (folder, folder / "canal.yaml"):
            os.chown(path, 1000, 1000)
    return folder


def row(phase: Phase) -> str:
    if not phase.samples:
        return f"  {phase.name:<28} no command succeeded"
    s = phase.samples
    return (f"  {phase.name:<28} p50 {pct(s, 0.5):8.1f} ms   p95 {pct(s, 0.95):8.1f} ms"
            f"   p99 {pct(s, 0.99):8.1f} ms   mean {statistics.fmean(s) * 1000:8.1f} ms")


def report(phase: Phase) -> None:
    print(f"{phase.name}: {phase.attempted} attempted, {phase.succeeded} succeeded, {phase.lost} lost; "
          f"wall {phase.wall_s:.1f} s, {phase.succeeded / phase.wall_s:.1f} commands/s; "
          f"load average {phase.load_before:.2f} -> {phase.load_after:.2f}")
    print(row(phase))
    for error, count in phase.errors.most_common(5):
        print(f"    lost x{count}: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=8)
    parser.add_argument("--agents", type=int, default=8, help="concurrent agents per project")
    parser.add_argument("--commands", type=int, default=100, help="commands per agent")
    parser.add_argument("--workspace", default="rw", choices=("rw", "ro", "none"),
                        help="each project's canal.yaml workspace (default rw, Canal's default)")
    parser.add_argument("--skip-cli", action="store_true", help="API phase and its baseline only")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-many-"))
    for name in [k for k in os.environ if k.startswith("CANAL_")]:
        del os.environ[name]
    # one state root for every project (the point of this bench); its own server, config and caches
    os.environ.update(CANAL_STATE_DIR=str(root / "state"), CANAL_RUNTIME_DIR=str(root / "rt"),
                      CANAL_CONFIG_DIR=str(root / "config"), CANAL_CACHE_DIR=str(root / "cache"))
    folders = [make_project(root, f"proj{i}", args.workspace) for i in range(args.projects)]
    container = f"bench-many-base-{os.getpid()}"
    try:
        measure(folders, container, args)
    finally:
        for folder in folders:
            with contextlib.suppress(subprocess.TimeoutExpired):
                canal(folder, "down", timeout=120)
        stop_server(CANAL)
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)


def measure(folders: list[Path], container: str, args: argparse.Namespace) -> None:
    from canal import Canal

    n, m, k = len(folders), args.agents, args.commands
    print(f"{n} projects x {m} agents x {k} commands, workspace: {args.workspace}, "
          f"one CANAL_STATE_DIR {os.environ['CANAL_STATE_DIR']}")
    load_start = loadavg()
    print(f"load average before: {load_start:.2f}")
    subprocess.run(["docker", "run", "-d", "--rm", "--name", container, *HARDENING, IMAGE, "sleep",
                    "infinity"], capture_output=True, check=True)
    warm = time.perf_counter()
    for folder in folders:  # each project's sandbox made and its session warm, untimed
        result = Canal.connect(folder).run("true")
        if result.status != "ok":
            raise SystemExit(f"warm-up failed in {folder}: {result.text}")
    for _ in range(3):
        subprocess.run(["docker", "exec", container, "true"], capture_output=True, check=True)
    print(f"warm-up (sandboxes made, one command each): {time.perf_counter() - warm:.1f} s")
    server_start = server_status()
    phases = [run_phase("API Canal.connect().run", n, m, k, api_agent(folders, k))]
    report(phases[-1])
    phases.append(run_phase("docker exec (after API)", n, m, k, docker_agent(container, "base1", k)))
    report(phases[-1])
    if not args.skip_cli:
        phases.append(run_phase("CLI canal run", n, m, k, cli_agent(folders, k)))
        report(phases[-1])
        phases.append(run_phase("docker exec (after CLI)", n, m, k, docker_agent(container, "base2", k)))
        report(phases[-1])
    load_end = loadavg()
    print(f"load average after: {load_end:.2f}")
    server_end = server_status()
    print(f"server: pid {server_start[0]} build {server_start[1]} at the start, pid {server_end[0]} build "
          f"{server_end[1]} at the end" + ("" if server_start == server_end else " (replaced in the run)"))
    audited = ("api",) if args.skip_cli else ("api", "cli")
    checks = [check_audit(folder, i, audited, m, k) for i, folder in enumerate(folders)]
    print("audit, per project (verify exit; run records of this bench's commands):")
    for check in checks:
        print(f"  {check.project}: verify exit {check.verify_rc} ({check.verify_line[:90]}); "
              f"{check.started}/{check.expected} run.started, {check.completed}/{check.expected} "
              f"run.completed exit 0; {check.records} run.* records")
        for outcome, count in check.other.most_common():
            print(f"    other outcome x{count}: {outcome}")
    summary(phases, checks, load_start, load_end, args, n)


def summary(phases: list[Phase], checks: list[AuditCheck], load_start: float, load_end: float,
            args: argparse.Namespace, n: int) -> None:
    print()
    print(f"| phase ({n} projects x {args.agents} agents x {args.commands} commands) | attempted | succeeded "
          "| lost | p50 ms | p95 ms | p99 ms | wall s | commands/s | load before -> after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for p in phases:
        if p.samples:
            q = f"{pct(p.samples, 0.5):.1f} | {pct(p.samples, 0.95):.1f} | {pct(p.samples, 0.99):.1f}"
        else:
            q = "- | - | -"
        print(f"| {p.name} | {p.attempted} | {p.succeeded} | {p.lost} | {q} | {p.wall_s:.1f} "
              f"| {p.succeeded / p.wall_s:.1f} | {p.load_before:.2f} -> {p.load_after:.2f} |")
    pairs = [(phases[0], phases[1])] + ([(phases[2], phases[3])] if len(phases) == 4 else [])
    for ours, base in pairs:
        if ours.samples and base.samples:
            print(f"\n{ours.name} / {base.name}: p50 {pct(ours.samples, 0.5) / pct(base.samples, 0.5):.2f}x, "
                  f"p99 {pct(ours.samples, 0.99) / pct(base.samples, 0.99):.2f}x, throughput "
                  f"{(ours.succeeded / ours.wall_s) / (base.succeeded / base.wall_s):.2f}x")
    verified = sum(c.verify_rc == 0 for c in checks)
    missing = sum(c.missing for c in checks)
    others = sum((c.other for c in checks), Counter())
    for outcome, count in others.most_common():
        print(f"audit, other outcome of the bench's commands x{count}: {outcome}")
    print(f"\naudit: `canal audit verify` exit 0 in {verified}/{len(checks)} projects; "
          f"{sum(c.expected for c in checks)} commands expected, {missing} without a run.started and a "
          f"run.completed exit 0; "
          f"load average {load_start:.2f} at the start, {load_end:.2f} at the end")


if __name__ == "__main__":
    main()
