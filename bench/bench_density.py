"""Benchmark (issue 30): how many idle sandboxes one host holds, and what each costs.

    python bench/bench_density.py                      # 50 sandboxes: 50 projects' default sandboxes
    python bench/bench_density.py --sandboxes 3        # a quick run
    python bench/bench_density.py --per-project 5      # 10 projects x 5 named sandboxes (limit: 8 each)

Everything in a temporary folder: one ``CANAL_STATE_DIR`` for every project, its own server (runtime
folder), config and caches; removed at the end with every container. Two phases, one after the other
(``--baseline-first`` swaps them), each from an empty host state to N idle containers and back:

- Canal: a warm-up project's sandbox first (the server started, its imports and policy loaded, one
  session), then N sandboxes brought up at once (``--parallel`` threads, default all), each by
  ``Canal.connect(project, sandbox=NAME).up()`` (made, started, its session warm in the server). At most
  8 per project (``limits.sandboxes``' default; more would need canal.yaml approved at a terminal);
- baseline: N ``docker run -d canal/sandbox:0.1.0 sleep infinity`` with the sandbox's hardening flags
  (no network, read-only root, no capabilities, no-new-privileges, the same tmpfs, memory, CPU and pids
  limits, ``--init`` as the sandbox has, a folder bind-mounted at /workspace), with the same concurrency.

Measured after ``--settle`` seconds, the same way for both: host memory (``MemAvailable`` of
/proc/meminfo, before and after; per container the difference / N), each container's memory cgroup
(``memory.usage_in_bytes`` less ``total_inactive_file``, as ``docker stats`` shows it, and its ``rss``),
the RSS and PSS of the processes in it (Canal's agent is one), the ``containerd-shim`` of each (RSS and
PSS from /proc), ``dockerd`` and ``containerd``, and for Canal the server process's RSS and PSS (its pid
from ``canal server status --json``) before and after: per session, the difference / N. Start time: the
wall time to bring all N up, and each start's own p50/p99.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchserver import stop_server
from benchstats import pct

CANAL = str(Path(sys.executable).parent / "canal")
IMAGE = "canal/sandbox:0.1.0"
MIB = 1024 * 1024
GIB = 1024 * MIB
# the sandbox's default hardening (as `docker inspect` shows a Canal sandbox), as `docker run` flags
HARDENING = ["--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only",
             "--tmpfs", "/tmp:rw,nosuid,nodev,size=256m,mode=1777", "--tmpfs",
             "/home/agent:rw,nosuid,nodev,size=64m,mode=0700,uid=0,gid=0", "--memory", "1g",
             "--memory-swap", "1g", "--cpus", "1", "--pids-limit", "256", "--ipc", "private",
             "--shm-size", "64m", "--user", "0:0", "--init"]


def meminfo(key: str = "MemAvailable") -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    msg = f"{key} not in /proc/meminfo"
    raise RuntimeError(msg)


def proc_mem(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in bytes of one process, 0s when it is gone or unreadable."""
    rss = pss = 0
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
    return rss, pss


def processes() -> list[tuple[int, str]]:
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        rows.append((int(pid), args))
    return rows


def named(prefixes: tuple[str, ...]) -> tuple[int, int]:
    """RSS and PSS summed over the processes whose program is one of ``prefixes`` (dockerd, containerd)."""
    rss = pss = 0
    for pid, args in processes():
        if args.split(" ", 1)[0].rsplit("/", 1)[-1] in prefixes:
            r, p = proc_mem(pid)
            rss, pss = rss + r, pss + p
    return rss, pss


def cpu_ns(container_id: str) -> int | None:
    """CPU time the container's cgroup used so far, in nanoseconds (None when not found)."""
    for path, scale, key in ((Path(f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage"), 1, ""),
                             (Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat"), 1000,
                              "usage_usec")):
        with contextlib.suppress(OSError):
            text = path.read_text()
            if not key:
                return int(text) * scale
            for line in text.splitlines():
                if line.startswith(key + " "):
                    return int(line.split()[1]) * scale
    return None


def proc_cpu_ns(pid: int) -> int:
    """User + system CPU of one process (and its threads), in nanoseconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def cgroup_dir(container_id: str) -> Path | None:
    for path in (Path(f"/sys/fs/cgroup/memory/docker/{container_id}"),
                 Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope"),
                 Path(f"/sys/fs/cgroup/docker/{container_id}")):
        if path.is_dir():
            return path
    return None


@dataclass
class ContainerMem:
    usage: int = 0  # as docker stats: usage less inactive file pages
    rss: int = 0  # the cgroup's anonymous memory
    procs_rss: int = 0  # the processes in it, as /proc sees them
    procs_pss: int = 0
    procs: int = 0
    shim_rss: int = 0
    shim_pss: int = 0


def container_mem(container_id: str, shims: dict[str, int]) -> ContainerMem:
    mem = ContainerMem()
    folder = cgroup_dir(container_id)
    if folder is not None:
        if (folder / "memory.usage_in_bytes").exists():  # cgroup v1
            stat = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines())
            usage = int((folder / "memory.usage_in_bytes").read_text())
            mem.usage = usage - int(stat.get("total_inactive_file", 0))
            mem.rss = int(stat.get("total_rss", stat.get("rss", 0)))
        else:  # cgroup v2
            stat = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines())
            mem.usage = int((folder / "memory.current").read_text()) - int(stat.get("inactive_file", 0))
            mem.rss = int(stat.get("anon", 0))
        for pid in (folder / "cgroup.procs").read_text().split():
            r, p = proc_mem(int(pid))
            mem.procs += 1
            mem.procs_rss, mem.procs_pss = mem.procs_rss + r, mem.procs_pss + p
    shim = shims.get(container_id)
    if shim is not None:
        mem.shim_rss, mem.shim_pss = proc_mem(shim)
    return mem


def shim_pids() -> dict[str, int]:
    """Container id -> the pid of its ``containerd-shim`` (runc v2: ``-id <container id>``)."""
    found = {}
    for pid, args in processes():
        words = args.split()
        if words and "containerd-shim" in words[0] and "-id" in words:
            found[words[words.index("-id") + 1]] = pid
    return found


def container_ids(names: list[str]) -> list[str]:
    out = subprocess.run(["docker", "inspect", "--format", "{{.Id}}", *names], capture_output=True, text=True,
                         check=False).stdout
    return out.split()


@dataclass
class PhaseResult:
    name: str
    n: int
    wall_s: float = 0.0
    starts: list[float] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    avail_before: int = 0
    avail_after: int = 0
    avail_removed: int = 0
    containers: list[ContainerMem] = field(default_factory=list)
    daemons_before: tuple[int, int] = (0, 0)
    daemons_after: tuple[int, int] = (0, 0)
    server_before: tuple[int, int] | None = None
    server_after: tuple[int, int] | None = None
    load_before: float = 0.0
    load_after: float = 0.0
    remove_s: float = 0.0
    idle_cpu: list[float] = field(default_factory=list)  # per container, share of one core while idle
    server_idle_cpu: float | None = None

    @property
    def host_per(self) -> float:
        return (self.avail_before - self.avail_after) / max(1, len(self.starts))

    def mean(self, attr: str) -> float:
        values = [getattr(c, attr) for c in self.containers]
        return sum(values) / len(values) if values else 0.0


def bring_up(jobs: list[Callable[[], None]], parallel: int, result: PhaseResult) -> None:
    lock = threading.Lock()

    def one(job: Callable[[], None]) -> None:
        start = time.perf_counter()
        try:
            job()
        except Exception as exc:  # a failed start, counted with its error
            with lock:
                result.failed.append(f"{type(exc).__name__}: {str(exc)[:300]}")
            return
        with lock:
            result.starts.append(time.perf_counter() - start)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=parallel or len(jobs)) as pool:
        list(pool.map(one, jobs))
    result.wall_s = time.perf_counter() - start


def measure_up(result: PhaseResult, ids: list[str], settle: float, server: int | None = None) -> None:
    time.sleep(settle)
    before = [cpu_ns(cid) for cid in ids]
    server_cpu = proc_cpu_ns(server) if server else 0
    started = time.perf_counter()
    time.sleep(max(settle, 5.0))  # the idle window: what idle sandboxes cost in CPU
    window = time.perf_counter() - started
    after = [cpu_ns(cid) for cid in ids]
    result.idle_cpu = [(b - a) / 1e9 / window for a, b in zip(before, after, strict=True)
                       if a is not None and b is not None]
    if server:
        result.server_idle_cpu = (proc_cpu_ns(server) - server_cpu) / 1e9 / window
    result.avail_after = meminfo()
    shims = shim_pids()
    result.containers = [container_mem(cid, shims) for cid in ids]
    result.daemons_after = named(("dockerd", "containerd"))


def server_pid() -> int | None:
    done = subprocess.run([CANAL, "server", "status", "--json"], capture_output=True, text=True, check=False)
    with contextlib.suppress(json.JSONDecodeError):
        data = json.loads(done.stdout)
        if data.get("running"):
            return int(data["pid"])
    return None


def make_project(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "canal.yaml").write_text("workspace: rw\n")
    if os.geteuid() == 0:  # the sandbox user (1000) owns it, as on a developer's machine
        for path in (folder, folder / "canal.yaml"):
            os.chown(path, 1000, 1000)
    return folder


def sandbox_names(per_project: int) -> list[str]:
    return ["default", *(f"s{i}" for i in range(1, per_project))]


def canal_phase(root: Path, args: argparse.Namespace) -> PhaseResult:
    from canal import Canal
    from canal.host.paths import project_key

    result = PhaseResult("Canal sandboxes", args.sandboxes)
    warm = make_project(root, "warmup")
    Canal.connect(warm).run("true")  # server up, imports and policy loaded, one session
    pid = server_pid()
    folders: list[Path] = []
    targets: list[tuple[Path, str]] = []
    names = sandbox_names(args.per_project)
    while len(targets) < args.sandboxes:
        folder = make_project(root, f"proj{len(folders)}")
        folders.append(folder)
        targets.extend((folder, name) for name in names[: args.sandboxes - len(targets)])
    time.sleep(args.settle)
    result.load_before = os.getloadavg()[0]
    result.avail_before = meminfo()
    result.daemons_before = named(("dockerd", "containerd"))
    result.server_before = proc_mem(pid) if pid else None
    rss = (result.server_before or (0, 0))[0]
    print(f"  server pid {pid}: RSS {rss / MIB:.1f} MiB with one warm session")
    bring_up([lambda f=f, s=s: Canal.connect(f, sandbox=s).up() for f, s in targets], args.parallel, result)
    containers = [f"canal-{project_key(f)}-{s}" for f, s in targets]
    measure_up(result, container_ids(containers), args.settle, pid)
    pid_after = server_pid()
    if pid_after != pid:
        print(f"  the server's pid changed during the phase: {pid} -> {pid_after}")
    result.server_after = proc_mem(pid_after) if pid_after else None
    result.load_after = os.getloadavg()[0]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=8) as pool:
        downs = list(pool.map(lambda t: Canal.connect(t[0], sandbox=t[1]).down(), targets))
    result.remove_s = time.perf_counter() - start
    if not all(downs):
        print(f"  canal down: {downs.count(False)} of {len(downs)} reported no sandbox")
    Canal.connect(warm).down()
    time.sleep(args.settle)
    result.avail_removed = meminfo()
    return result


def baseline_phase(root: Path, args: argparse.Namespace) -> PhaseResult:
    result = PhaseResult("docker run sleep infinity", args.sandboxes)
    folder = root / "baseline"
    folder.mkdir()
    names = [f"bench-density-base-{os.getpid()}-{i}" for i in range(args.sandboxes)]

    def start(name: str) -> None:
        subprocess.run(["docker", "run", "-d", "--name", name, *HARDENING, "-v", f"{folder}:/workspace",
                        IMAGE, "sleep", "infinity"], capture_output=True, check=True)

    time.sleep(args.settle)
    result.load_before = os.getloadavg()[0]
    result.avail_before = meminfo()
    result.daemons_before = named(("dockerd", "containerd"))
    bring_up([lambda n=n: start(n) for n in names], args.parallel, result)
    measure_up(result, container_ids(names), args.settle)
    result.load_after = os.getloadavg()[0]
    started = time.perf_counter()
    remove_containers(names)
    result.remove_s = time.perf_counter() - started
    time.sleep(args.settle)
    result.avail_removed = meminfo()
    return result


def remove_containers(names: list[str]) -> None:
    for i in range(0, len(names), 25):
        subprocess.run(["docker", "rm", "-f", *names[i:i + 25]], capture_output=True, check=False)


def show(r: PhaseResult) -> None:
    up = len(r.starts)
    p50, p99 = (pct(r.starts, 0.5), pct(r.starts, 0.99)) if r.starts else (0.0, 0.0)
    print(f"{r.name}: {up} of {r.n} up ({len(r.failed)} failed) in {r.wall_s:.2f} s; per start p50 "
          f"{p50:.0f} ms, p99 {p99:.0f} ms; "
          f"load average {r.load_before:.2f} -> {r.load_after:.2f}")
    for error in sorted(set(r.failed))[:5]:
        print(f"    failed x{r.failed.count(error)}: {error}")
    print(f"  host MemAvailable {r.avail_before / GIB:.2f} GiB -> {r.avail_after / GIB:.2f} GiB with {up} up "
          f"({(r.avail_before - r.avail_after) / MIB:.0f} MiB, {r.host_per / MIB:.1f} MiB each); "
          f"{r.avail_removed / GIB:.2f} GiB after removal ({r.remove_s:.1f} s)")
    print(f"  per container, mean: cgroup {r.mean('usage') / MIB:.1f} MiB (rss {r.mean('rss') / MIB:.1f}); "
          f"its {r.mean('procs'):.1f} processes RSS {r.mean('procs_rss') / MIB:.1f} / PSS "
          f"{r.mean('procs_pss') / MIB:.1f} MiB; shim RSS {r.mean('shim_rss') / MIB:.1f} / PSS "
          f"{r.mean('shim_pss') / MIB:.1f} MiB (sum RSS {sum(c.shim_rss for c in r.containers) / MIB:.0f} "
          "MiB)")
    if r.idle_cpu:
        print(f"  idle CPU over the window: {sum(r.idle_cpu) / len(r.idle_cpu) * 100:.3f}% of a core per "
              f"container (all {sum(r.idle_cpu) * 100:.2f}%)"
              + (f"; the server {r.server_idle_cpu * 100:.2f}%" if r.server_idle_cpu is not None else ""))
    d0, d1 = r.daemons_before, r.daemons_after
    print(f"  dockerd + containerd RSS {d0[0] / MIB:.0f} -> {d1[0] / MIB:.0f} MiB "
          f"({(d1[0] - d0[0]) / max(1, up) / MIB:.2f} MiB each)")
    if r.server_before and r.server_after:
        s0, s1 = r.server_before, r.server_after
        print(f"  Canal server RSS {s0[0] / MIB:.1f} -> {s1[0] / MIB:.1f} MiB, PSS {s0[1] / MIB:.1f} -> "
              f"{s1[1] / MIB:.1f} MiB: {(s1[0] - s0[0]) / max(1, up) / MIB:.2f} MiB RSS per session")


def summary(canal: PhaseResult, base: PhaseResult, args: argparse.Namespace) -> None:
    def ms(r: PhaseResult, q: float) -> str:
        return f"{pct(r.starts, q):.0f}" if r.starts else "-"

    def server(r: PhaseResult) -> str:
        if not (r.server_before and r.server_after):
            return "-"
        per = (r.server_after[0] - r.server_before[0]) / max(1, len(r.starts)) / MIB
        return f"{r.server_before[0] / MIB:.1f} -> {r.server_after[0] / MIB:.1f} MiB ({per:.2f} MiB/session)"

    print()
    print(f"| {args.sandboxes} idle containers ({args.per_project} per project) | Canal sandboxes | "
          "`docker run ... sleep infinity` | ratio |")
    print("|---|---:|---:|---:|")
    rows = [
        ("up / failed", f"{len(canal.starts)} / {len(canal.failed)}",
         f"{len(base.starts)} / {len(base.failed)}", ""),
        ("all up, wall", f"{canal.wall_s:.2f} s", f"{base.wall_s:.2f} s",
         f"{canal.wall_s / base.wall_s:.2f}x"),
        ("per start p50 / p99", f"{ms(canal, 0.5)} / {ms(canal, 0.99)} ms",
         f"{ms(base, 0.5)} / {ms(base, 0.99)} ms",
         f"{pct(canal.starts, 0.5) / pct(base.starts, 0.5):.2f}x" if canal.starts and base.starts else ""),
        ("host MemAvailable drop, per container", f"{canal.host_per / MIB:.1f} MiB",
         f"{base.host_per / MIB:.1f} MiB",
         f"{canal.host_per / base.host_per:.2f}x" if base.host_per > 0 else ""),
    ]
    for label, attr in (("cgroup memory (as docker stats), mean", "usage"), ("cgroup rss, mean", "rss"),
                        ("processes inside: RSS, mean", "procs_rss"),
                        ("processes inside: PSS, mean", "procs_pss"),
                        ("containerd-shim RSS, mean", "shim_rss"), ("containerd-shim PSS, mean", "shim_pss")):
        a, b = canal.mean(attr), base.mean(attr)
        rows.append((label, f"{a / MIB:.1f} MiB", f"{b / MIB:.1f} MiB", f"{a / b:.2f}x" if b else ""))
    rows.append(("Canal server RSS, before -> after", server(canal), "-", ""))

    def cpu(r: PhaseResult) -> str:
        return f"{sum(r.idle_cpu) / len(r.idle_cpu) * 100:.3f}%" if r.idle_cpu else "-"

    rows.append(("idle CPU per container (share of one core)", cpu(canal), cpu(base), ""))
    if canal.server_idle_cpu is not None:
        rows.append(("Canal server idle CPU (share of one core)", f"{canal.server_idle_cpu * 100:.2f}%",
                     "-", ""))
    rows.append(("load average before -> after", f"{canal.load_before:.2f} -> {canal.load_after:.2f}",
                 f"{base.load_before:.2f} -> {base.load_after:.2f}", ""))
    for label, a, b, ratio in rows:
        print(f"| {label} | {a} | {b} | {ratio} |")
    total = meminfo("MemTotal")
    reserve = 2 * GIB
    if canal.host_per > 0:
        line = (f"\nestimate: at {canal.host_per / MIB:.1f} MiB per idle sandbox (host MemAvailable drop), "
                f"{(24 * GIB - reserve) / canal.host_per:.0f} idle sandboxes fit in a 24 GiB host leaving "
                f"2 GiB to the system ({(total - reserve) / canal.host_per:.0f} on this one, MemTotal "
                f"{total / GIB:.1f} GiB)")
        parts = canal.mean("usage") + canal.mean("shim_pss")
        if canal.server_before and canal.server_after:
            parts += (canal.server_after[0] - canal.server_before[0]) / max(1, len(canal.starts))
        if parts > 0:
            line += (f"; counting only the parts measured one by one (cgroup + shim PSS + the server's "
                     f"growth per session, {parts / MIB:.1f} MiB), {(24 * GIB - reserve) / parts:.0f}")
        if base.host_per > 0:
            line += (f"; at the baseline's {base.host_per / MIB:.1f} MiB, "
                     f"{(24 * GIB - reserve) / base.host_per:.0f}")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sandboxes", type=int, default=50)
    parser.add_argument("--per-project", type=int, default=1, choices=range(1, 9),
                        help="sandboxes per project (default 1: each project's default sandbox)")
    parser.add_argument("--parallel", type=int, default=0, help="starts at once (default 0: all)")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds before each memory reading")
    parser.add_argument("--baseline-first", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-density-"))
    for name in [k for k in os.environ if k.startswith("CANAL_")]:
        del os.environ[name]
    os.environ.update(CANAL_STATE_DIR=str(root / "state"), CANAL_RUNTIME_DIR=str(root / "rt"),
                      CANAL_CONFIG_DIR=str(root / "config"), CANAL_CACHE_DIR=str(root / "cache"))
    print(f"{args.sandboxes} idle sandboxes, {args.per_project} per project, parallel "
          f"{args.parallel or args.sandboxes}; load average before: {os.getloadavg()[0]:.2f}")
    try:
        if args.baseline_first:
            base = baseline_phase(root, args)
            show(base)
            canal = canal_phase(root, args)
            show(canal)
        else:
            canal = canal_phase(root, args)
            show(canal)
            base = baseline_phase(root, args)
            show(base)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        summary(canal, base, args)
    finally:
        cleanup(root)


def cleanup(root: Path) -> None:
    from canal.host.paths import project_key

    left = [f"canal-{project_key(folder)}-" for folder in root.iterdir() if (folder / "canal.yaml").exists()]
    out = subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                         check=False).stdout.split()
    ours = [name for name in out if name.startswith(tuple(left) or ("\0",))
            or name.startswith(f"bench-density-base-{os.getpid()}-")]
    if ours:
        print(f"cleanup: removing {len(ours)} containers left behind")
        remove_containers(ours)
    stop_server(CANAL)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
