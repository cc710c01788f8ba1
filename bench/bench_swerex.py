"""SWE-ReX's ``RemoteRuntime.run_in_session`` round trip: through ``canal swerex serve`` vs SWE-ReX's own
server in a container of the same image (issue 34), interleaved, same machine.

Both sides run from one project image (the python preset plus ``swe-rex``, built by Canal; its pip reaches
the index through the host's CA bundle: ``sandbox.ca_certificates: [host]``). SWE-ReX's server runs in a
plain container of that image with its port published on 127.0.0.1; Canal's endpoint runs on the host and
its sessions in sandboxes of the project. The client is SWE-ReX's own, in a virtual environment with
``swe-rex`` and ``aiohttp`` (``--python``, else one made under /var/tmp). Each round sends the same
command to each in alternation; p50/p95/p99 per side, their ratio, and the load average before and after.

    python bench/bench_swerex.py --rounds 200 [--command true]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from benchstats import pct

CANAL = str(Path(sys.executable).with_name("canal"))
CLIENT = textwrap.dedent("""\
    import asyncio, json, sys, time
    from swerex.runtime.abstract import BashAction, CreateBashSessionRequest
    from swerex.runtime.remote import RemoteRuntime

    async def main(rounds, command, sides):
        runtimes = {name: RemoteRuntime(host="http://127.0.0.1", port=port, auth_token=key)
                    for name, port, key in sides}
        for rt in runtimes.values():
            await rt.create_session(CreateBashSessionRequest(session="bench"))
            for _ in range(5):  # warm both
                await rt.run_in_session(BashAction(command=command, session="bench", timeout=30))
        times = {name: [] for name in runtimes}
        for i in range(rounds):
            order = list(runtimes) if i % 2 == 0 else list(reversed(runtimes))
            for name in order:
                start = time.perf_counter()
                await runtimes[name].run_in_session(BashAction(command=command, session="bench", timeout=30))
                times[name].append(time.perf_counter() - start)
        print(json.dumps(times))

    rounds, command, sides = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    asyncio.run(main(rounds, command, sides))
    """)


def _client_python(given: str | None) -> str:
    if given:
        return given
    venv = Path("/var/tmp/canal-bench-swerex-venv")
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "swe-rex==1.4.0", "aiohttp"], check=True)
    return str(python)


def _project(base: Path) -> Path:
    from canal.host.approvals import Approver
    from canal.runtime.services import Services

    folder = base / "project"
    folder.mkdir()
    (folder / "canal.yaml").write_text("sandbox:\n  ca_certificates: [host]\nimage:\n  preset: python\n"
                                       "  pip: [swe-rex==1.4.0]\n")
    subprocess.run(["chown", "-R", "1000:1000", str(folder)], check=True)
    services = Services(folder)
    services.trust.approve(Approver(user="bench", how="tty"), services.trust.status().snapshot.digest)
    return folder


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--command", default="true")
    parser.add_argument("--python", help="a Python with swe-rex and aiohttp (default: a venv made once)")
    args = parser.parse_args()
    python = _client_python(args.python)
    base = Path(tempfile.mkdtemp(prefix="canal-bench-swerex-", dir="/var/tmp"))
    base.chmod(0o755)
    os.environ.setdefault("CANAL_STATE_DIR", str(base / "state"))
    project = _project(base)
    subprocess.run([CANAL, "image", "build"], cwd=project, check=True, capture_output=True)
    tag = json.loads(subprocess.run([CANAL, "image", "show", "--json"], cwd=project, check=True,
                                    capture_output=True, text=True).stdout)["image"]
    rex_key, canal_key = secrets.token_hex(16), secrets.token_hex(16)
    container = subprocess.run(["docker", "run", "-d", "--rm", "-p", "127.0.0.1::8000", "--user", "1000:1000",
                                "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", tag, "python3", "-m",
                                "swerex.server", "--port", "8000", "--auth-token", rex_key],
                               check=True, capture_output=True, text=True).stdout.strip()
    server = subprocess.Popen([CANAL, "swerex", "serve", "--port", "0"], cwd=project, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "CANAL_SWEREX_API_KEY": canal_key})
    try:
        line = server.stdout.readline() if server.stdout else ""
        canal_port = int(line.rsplit(":", 1)[1])
        published = subprocess.run(["docker", "port", container, "8000/tcp"], check=True, capture_output=True,
                                   text=True).stdout.split()[0]
        rex_port = int(published.rsplit(":", 1)[1])
        time.sleep(2)  # SWE-ReX's server starts uvicorn after its imports
        before = _loadavg()
        sides = [["canal", canal_port, canal_key], ["swe-rex", rex_port, rex_key]]
        done = subprocess.run([python, "-c", CLIENT, str(args.rounds), args.command, json.dumps(sides)],
                              check=True, capture_output=True, text=True)
        after = _loadavg()
    finally:
        server.terminate()
        server.communicate(timeout=60)
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
        subprocess.run([CANAL, "down"], cwd=project, capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
    times = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"run_in_session({args.command!r}), {args.rounds} rounds alternated; load {before} -> {after}")
    print("| side | p50 ms | p95 ms | p99 ms |\n|---|---|---|---|")
    for name in ("canal", "swe-rex"):
        values = times[name]
        print(f"| {name} | {pct(values, 0.50):.2f} | {pct(values, 0.95):.2f} | {pct(values, 0.99):.2f} |")
    print(f"ratio canal/swe-rex at p50: {pct(times['canal'], 0.5) / pct(times['swe-rex'], 0.5):.2f}x")


if __name__ == "__main__":
    main()
