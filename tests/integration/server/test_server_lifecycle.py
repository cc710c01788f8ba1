"""Starting, replacing and recovering the server; who may talk to it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served_cli import ServedProject
from server_helpers import stop_servers

import canal
from canal.client.paths import server_paths

OTHER_UID = 54321  # no passwd entry is needed to run as a uid


def status(served: ServedProject) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(served.run("server", "status", "--json").stdout)
    return data


def test_killed_server_leaves_a_stale_socket_the_next_call_replaces(served: ServedProject) -> None:
    assert served.run("run", "--", "true").returncode == 0
    old = status(served)
    os.kill(old["pid"], signal.SIGKILL)
    time.sleep(0.2)
    assert Path(old["socket"]).exists()  # what a crash leaves behind
    again = served.run("run", "--", "echo back")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("back\n")
    assert status(served)["pid"] != old["pid"]


def test_clients_starting_at_once_share_one_server(served: ServedProject) -> None:
    procs = [served.popen("run", "--", "true", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    locks = list(served.runtime.glob("server-*.lock"))
    assert len(locks) == 1
    assert status(served)["served"] == 4


def test_a_loose_runtime_folder_is_refused_with_the_fix(served: ServedProject) -> None:
    served.runtime.mkdir(mode=0o700)
    served.runtime.chmod(0o755)
    done = served.run("run", "--", "true")
    assert done.returncode == 125
    assert done.stderr.startswith("RUNTIME_DIR_UNSAFE")
    assert f"Next: chmod 700 {served.runtime}" in done.stderr
    assert not list(served.runtime.glob("server-*"))


def _old_package(tmp: Path) -> Path:
    """A copy of this package that calls itself another version: an older install of Canal."""
    root = tmp / "old-install"
    shutil.copytree(Path(canal.__file__).parent, root / "canal", ignore=shutil.ignore_patterns("__pycache__"))
    init = root / "canal" / "core" / "version.py"
    init.write_text(init.read_text().replace(f'__version__ = "{canal.__version__}"', '__version__ = "0.0.1"'))
    return root


def test_a_server_of_another_version_is_replaced(served: ServedProject, tmp_path: Path) -> None:
    old_root = _old_package(tmp_path)
    env = {**served.env, "PYTHONPATH": str(old_root)}
    subprocess.run([sys.executable, "-m", "canal.server", "--daemon"], env=env, cwd="/",
                   check=True, timeout=60, stdin=subprocess.DEVNULL, capture_output=True)
    deadline = time.monotonic() + 30
    while not list(served.runtime.glob("server-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.05)
    old = status(served)
    assert old["build"].startswith("0.0.1+")
    done = served.run("run", "--", "echo new")
    assert done.returncode == 0, done.stderr
    new = status(served)
    assert new["build"].startswith(f"{canal.__version__}+")
    assert new["pid"] != old["pid"]


def test_a_client_killed_mid_command_kills_the_command(served: ServedProject) -> None:
    proc = served.popen("run", "--stream", "--", "echo started; sleep 300", stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    proc.kill()
    proc.wait(timeout=10)
    proc.stdout.close()
    deadline = time.monotonic() + 20
    left = ""
    while time.monotonic() < deadline:
        left = served.run("run", "--", "ps -eo args=").stdout
        if "sleep 300" not in left:
            break
        time.sleep(0.2)
    assert "sleep infinity" in left
    assert "sleep 300" not in left


@pytest.fixture
def open_runtime(served: ServedProject) -> Iterator[ServedProject]:
    """The same project with its runtime folder under a world-traversable /tmp folder (for another uid)."""
    outer = Path(tempfile.mkdtemp(prefix="canal-peer-"))
    outer.chmod(0o711)
    served.runtime = outer / "rt"
    served.env["CANAL_RUNTIME_DIR"] = str(served.runtime)
    try:
        yield served
    finally:
        stop_servers(served.runtime)
        shutil.rmtree(outer, ignore_errors=True)


PROBE = r"""
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def send(kind, data):
    body = json.dumps(data).encode()
    s.sendall(kind + struct.pack(">I", len(body)) + body)
send(b"H", {"proto": 1, "build": "probe"})
send(b"R", {"op": "cli", "argv": ["run", "--", "touch /workspace/pwned"], "cwd": sys.argv[2], "env": {}})
out = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    out += chunk
sys.stdout.write(out.decode(errors="replace"))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="running a process as another uid needs root (CI runs as root)")
def test_another_uids_connection_is_refused_even_when_files_let_it_in(open_runtime: ServedProject) -> None:
    served = open_runtime
    assert served.run("run", "--", "true").returncode == 0
    sock = next(served.runtime.glob("server-*.sock"))
    served.runtime.chmod(0o711)  # loosened on purpose: only the peer check stands in the way now
    sock.chmod(0o666)
    probe = subprocess.run(["/usr/bin/python3", "-I", "-c", PROBE, str(sock), str(served.root)],
                           user=OTHER_UID, group=OTHER_UID, extra_groups=[], capture_output=True, text=True,
                           timeout=30, cwd="/")
    assert probe.returncode == 0, probe.stderr
    assert "SERVER_PEER_REFUSED" in probe.stdout
    assert f"your uid is {OTHER_UID}" in probe.stdout
    assert not (served.root / "pwned").exists()
    served.runtime.chmod(0o700)
    sock.chmod(0o600)
    assert "refused a connection from uid 54321" in served.run("server", "logs").stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="running a process as another uid needs root (CI runs as root)")
def test_the_client_refuses_a_server_running_as_another_uid(served: ServedProject) -> None:
    served.runtime.mkdir(mode=0o700)

    paths = server_paths(served.env)
    pid = os.fork()
    if pid == 0:  # the impostor: binds as us (so the file checks pass), then listens as another uid
        try:
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(str(paths.socket))
            os.chmod(paths.socket, 0o600)
            os.setgid(OTHER_UID)
            os.setuid(OTHER_UID)
            sock.listen(1)
            time.sleep(30)
        finally:
            os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while not paths.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        done = served.run("run", "--", "true", timeout=60)
        assert done.returncode == 125
        assert done.stderr.startswith("RUNTIME_DIR_UNSAFE")
        assert f"runs as uid {OTHER_UID}" in done.stderr
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_a_server_killed_mid_command_leaves_a_dangling_intent_reported_next(served: ServedProject) -> None:
    proc = served.popen("run", "--stream", "--", "echo started; sleep 300", stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    os.kill(status(served)["pid"], signal.SIGKILL)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 125
    assert err.startswith("SERVER_LOST")
    shown = served.run("audit", "show", "--event", "run.")
    intent = next(line for line in shown.stdout.splitlines() if "sleep 300" in line)
    assert "[no outcome: the process running it stopped" in intent
    started_id = intent.split()[0]
    after = served.run("run", "--", "echo next")
    assert after.returncode == 0, after.stderr
    assert after.stdout.startswith("next\n")
    assert after.stderr.startswith(f"NOTE: {started_id} `echo started; sleep 300` (sandbox default")
    assert "has no outcome" in after.stderr
    again = served.run("audit", "show", "--event", "run.")
    assert f"no outcome for {started_id}" in again.stdout
    assert "[no outcome:" not in again.stdout  # recorded once: no longer dangling
    assert "NOTE" not in served.run("run", "--", "true").stderr
