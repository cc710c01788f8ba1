"""Live output through a terminal, and Ctrl-C reaching the command's process tree in the sandbox."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time

from served_cli import CANAL, ServedProject


def read_until(fd: int, marker: bytes, deadline: float) -> tuple[bytes, float | None]:
    """Bytes from ``fd`` until ``marker`` shows up (and when it did), or the deadline passes."""
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if marker in seen:
            return seen, time.monotonic()
    return seen, None


def test_a_terminal_sees_the_first_line_long_before_the_command_ends(shared: ServedProject) -> None:
    served = shared
    assert served.run("run", "--", "true").returncode == 0  # the server and the sandbox are warm
    master, slave = pty.openpty()
    began = time.monotonic()
    proc = subprocess.Popen([CANAL, "run", "--", "echo first; sleep 4; echo last"], cwd=served.root,
                            env=served.env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        first, first_at = read_until(master, b"first", began + 30)
        rest, end_at = read_until(master, b"[exit:0", began + 60)
    finally:
        proc.wait(timeout=60)
        os.close(master)
    assert first_at is not None, first
    assert end_at is not None, rest
    assert end_at - first_at > 3.0  # first line shown while the command still had 4 s to go
    assert b"last" in rest
    assert proc.returncode == 0


def test_ctrl_c_kills_the_commands_process_tree_and_reports_it(shared: ServedProject) -> None:
    served = shared
    proc = served.popen("run", "--stream", "--", "sleep 300 & sleep 301 & echo started; wait",
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == "started\n"
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=30)
        rest = proc.stdout.read()
    finally:
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert code == 130
    assert "interrupted (SIGINT from the client" in rest
    left = served.run("run", "--", "ps -eo args=")
    assert "sleep infinity" in left.stdout  # the container's keepalive: the listing is real
    assert "sleep 300" not in left.stdout
    assert "sleep 301" not in left.stdout


def test_sigterm_is_reported_as_its_own_reason(shared: ServedProject) -> None:
    served = shared
    proc = served.popen("run", "--stream", "--", "echo started; sleep 300", stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=30)
    rest = proc.stdout.read()
    proc.stdout.close()
    assert code == 143
    assert "SIGTERM from the client" in rest
