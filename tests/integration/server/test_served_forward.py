"""``canal port-forward`` and a task's ``--forward``: the host reaches a server inside a sandbox that
keeps ``network: none``, on the host's loopback only."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from served_cli import ServedProject


@contextmanager
def forwarding(served: ServedProject, *args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``canal port-forward ... --json`` running; yields the address it listens on."""
    proc = served.popen("port-forward", "--json", *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline() or "{}")
        assert first.get("status") == "forwarding", proc.communicate(timeout=30)
        yield str(first["listen"]), proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def get(address: str, path: str = "/", timeout: float = 10) -> bytes:
    with urllib.request.urlopen(f"http://{address}{path}", timeout=timeout) as response:
        body: bytes = response.read()
        return body


def get_soon(address: str, path: str = "/") -> bytes:
    """The server inside may still be starting: try for a while."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return get(address, path)
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def web(served: ServedProject, port: int, *extra: str) -> dict[str, object]:
    (served.root / "hello.txt").write_text("hello from the sandbox\n")
    done = served.run("task", "start", "--json", *extra, "--", f"python3 -m http.server {port}")
    assert done.returncode == 0, done.stderr
    task: dict[str, object] = json.loads(done.stdout)["task"]
    return task


def test_a_server_in_a_sandbox_without_network_answers_on_the_hosts_loopback(served: ServedProject) -> None:
    web(served, 8000)
    interfaces = served.run("run", "--", "ls /sys/class/net")
    assert interfaces.stdout.splitlines()[0] == "lo"  # network: none, and it stays so
    assert interfaces.stdout.splitlines()[1].startswith("[exit:0")
    with forwarding(served, "0:8000") as (address, proc):
        assert address.startswith("127.0.0.1:")
        assert get_soon(address, "/hello.txt") == b"hello from the sandbox\n"
        port = address.rsplit(":", 1)[1]
        taken = served.run("port-forward", f"{port}:8000")
        assert taken.returncode == 125
        assert taken.stderr.startswith(f"FORWARD_PORT_IN_USE\nPort {port} on 127.0.0.1 is already in use")
        assert get(address, "/hello.txt") == b"hello from the sandbox\n"  # the first one is unharmed
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["status"] == "stopped"
    assert summary["connections"] - summary["failed"] == 2  # the first tries may come before the server
    assert summary["bytes_from_sandbox"] > 2 * len("hello from the sandbox\n")
    audit = served.run("audit", "show").stdout
    assert "forward.opened" in audit
    assert f"forward.closed   agent    bytes_from_sandbox={summary['bytes_from_sandbox']}" in audit


def test_nothing_listening_inside_is_an_error_on_connect_and_forwarding_goes_on(
        served: ServedProject) -> None:
    assert served.run("up").returncode == 0
    with forwarding(served, "0:8010") as (address, proc):
        try:
            get(address)
            raise AssertionError("a connection to a port nothing listens on should fail")
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        web(served, 8010)
        assert get_soon(address, "/hello.txt") == b"hello from the sandbox\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert "connection 1: nothing listens on port 8010 in sandbox default (Connection refused); still " \
           f"forwarding {address}" in err


def test_only_loopback_addresses_are_accepted(served: ServedProject) -> None:
    for spec in ("0.0.0.0:8080:8000", "192.168.1.10:8080:8000", "example.com:8080:8000"):
        refused = served.run("port-forward", spec)
        assert refused.returncode == 2, spec
        assert refused.stderr.startswith("FORWARD_ADDRESS_REFUSED\n"), refused.stderr
    bad = served.run("port-forward", "8080:99999")
    assert bad.returncode == 2
    assert bad.stderr.startswith("FORWARD_SPEC_INVALID\n")
    task = served.run("task", "start", "--forward", "0.0.0.0:0:8000", "--", "sleep 4242")
    assert task.returncode == 2
    assert task.stderr.startswith("FORWARD_ADDRESS_REFUSED\n")
    assert "sleep 4242" not in served.run("task", "list").stdout  # nothing started


def test_a_tasks_forward_lives_and_dies_with_the_task(served: ServedProject) -> None:
    task = web(served, 8020, "--forward", "0:8020")
    forwards = task["forwards"]
    assert isinstance(forwards, list)
    address = str(forwards[0]["host"])
    assert get_soon(address, "/hello.txt") == b"hello from the sandbox\n"
    shown = served.run("task", "show", str(task["id"]))
    assert f"forward {address} -> 8020]" in shown.stdout
    assert served.run("task", "cancel", str(task["id"])).returncode == 0
    try:
        get(address, timeout=3)
        raise AssertionError("the forward should have closed with its task")
    except (urllib.error.URLError, ConnectionError, OSError):
        pass


# only root can run a client as another user here; CANAL_REQUIRE_ROOT=1 (CI) fails the run instead of
# skipping, and the assertion is never dropped inside a passing test (issue 35)
@pytest.mark.skipif(os.geteuid() != 0, reason="running a client as another user needs root")
def test_another_local_user_cannot_use_the_forward(served: ServedProject) -> None:
    web(served, 8030)
    with forwarding(served, "0:8030") as (address, proc):
        assert get_soon(address, "/hello.txt") == b"hello from the sandbox\n"
        code = (f"import urllib.request; print(urllib.request.urlopen('http://{address}/hello.txt', "
                "timeout=5).read())")
        python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # not a private venv
        other = subprocess.run([python, "-c", code], user=65534, group=65534, capture_output=True,
                               text=True, timeout=60, check=False, cwd="/")
        assert other.returncode != 0
        assert "hello from the sandbox" not in other.stdout
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert "refused: it does not come from a process of uid 0" in err
    assert json.loads(out)["refused_peers"] == 1
