"""``Canal.connect(project).run("true")`` on its kept connection (now), with a new connection per call,
and with the build id taken on every call as well (before issue 33's changes), side by side with
``exec_run("true")`` on the same sandbox.

Its own runtime folder, state and config (its own server, stopped at the end), a project with
``workspace: ro`` (no checkpoint needed, so the round trip is what is measured) and one with
``workspace: rw`` where ``sh -c true`` is run (a checkpoint of the server's watched store before it).
Each round runs them in alternating order; p50/p95/p99, the ratio of exec_run's p50 to each, and the
load average.

    python bench/bench_connect.py --rounds 200
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchserver import stop_server
from benchstats import pct

CANAL = str(Path(sys.executable).with_name("canal"))


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="canal-bench-connect-"))
    os.environ.update(CANAL_RUNTIME_DIR=str(root / "rt"), CANAL_STATE_DIR=str(root / "state"),
                      CANAL_CONFIG_DIR=str(root / "config"))
    os.environ.pop("CANAL_NO_SERVER", None)
    from canal import Canal
    from canal.client import paths
    from canal.host.approvals import Approver
    from canal.runtime.services import Services

    def approved(name: str, workspace: str) -> Path:
        project = root / name
        project.mkdir()
        (project / "canal.yaml").write_text(f"workspace: {workspace}\n")
        services = Services(project)
        services.trust.approve(Approver(user="bench", how="tty"), services.trust.status().snapshot.digest)
        return project

    project = approved("project", "ro")
    remote = Canal.connect(project)
    writable = Canal.connect(approved("writable", "rw"))  # sh -c true: a checkpoint before it
    try:
        remote.up()
        writable.up()
        import docker

        container = docker.from_env().containers.get(Canal(project).ref().container)
        for _ in range(5):
            remote.run("true")
            writable.run("sh -c true")
            container.exec_run("true")

        def once() -> None:
            result = remote.run("true")
            if result.status != "ok":
                raise SystemExit(result.text)

        def new_connection() -> None:
            remote.close()  # as before: a connection and handshake per call
            once()

        def every_call() -> None:
            paths._built = None  # as before that: the package stat-ed on every call
            new_connection()

        def checkpointed() -> None:
            result = writable.run("sh -c true")
            if result.status != "ok" or result.checkpoint is None:
                raise SystemExit(result.text)

        sides = {"connect (kept connection)": once, "connect (new connection per call)": new_connection,
                 "connect (build id every call)": every_call,
                 "connect sh -c true (checkpointed)": checkpointed,
                 "exec_run": lambda: container.exec_run("true")}
        times: dict[str, list[float]] = {name: [] for name in sides}
        before = _loadavg()
        for i in range(args.rounds):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in order:
                began = time.perf_counter()
                sides[name]()
                times[name].append(time.perf_counter() - began)
        after = _loadavg()
    finally:
        remote.down()
        writable.down()
        stop_server(CANAL)
        shutil.rmtree(root, ignore_errors=True)
    report = {name: {f"p{q}": round(pct(v, q / 100), 2) for q in (50, 95, 99)} for name, v in times.items()}
    base = report["exec_run"]["p50"]
    print(json.dumps({"rounds": args.rounds, "ms": report,
                      "exec_run_p50_over": {n: round(base / r["p50"], 2) for n, r in report.items()},
                      "loadavg_before": before, "loadavg_after": after}, indent=2))


if __name__ == "__main__":
    main()
