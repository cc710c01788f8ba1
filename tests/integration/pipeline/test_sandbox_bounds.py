"""Bounds a sandbox keeps on a bind-mounted workspace: quota, /dev/shm, message queues, leftovers.

The quota is shown with a small limit configured here (8 MiB), not by writing gigabytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.runtime.api import Canal

from .conftest import make_project

CONFIG = """\
sandbox:
  limits: {workspace_size: 8m, shm_size: 4m, memory: 256m}
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, host_env: Path) -> Iterator[Canal]:
    project = make_project(tmp_path_factory.mktemp("bounds"), CONFIG)
    with Canal(project) as c:
        yield c
        c.down()


def test_a_writer_past_the_bind_mounted_quota_is_stopped(small: Canal) -> None:
    result = small.run("for i in $(seq 1 40); do head -c 1M /dev/urandom > chunk-$i; sleep 0.05; done; "
                       "echo finished")
    assert result.reason.startswith("killed: workspace quota exceeded (limit 8 MiB"), result.text
    assert "killed: workspace quota exceeded (limit 8 MiB" in result.text.splitlines()[-1]
    assert result.status == "killed"
    assert "finished" not in result.output
    written = sum(p.stat().st_size for p in small.project_dir.glob("chunk-*"))
    assert written < 20 * 1024 * 1024, f"{written} bytes written past an 8 MiB quota"
    small.run("rm -f chunk-*")


def test_one_big_file_at_once_is_stopped_too(small: Canal) -> None:
    result = small.run("fallocate -l 64M big.bin; echo status=$?")
    assert "quota" in result.text or "status=1" in result.output, result.text
    assert not (small.project_dir / "big.bin").exists() or (
        (small.project_dir / "big.bin").stat().st_blocks * 512 <= 8 * 1024 * 1024)
    small.run("rm -f big.bin")


def test_dev_shm_is_sized(small: Canal) -> None:
    result = small.run("head -c 16M /dev/zero > /dev/shm/fill; echo status=$?; "
                       "du -k /dev/shm/fill | cut -f1; df -k /dev/shm | tail -1")
    assert "status=1" in result.output, result.text
    used_kib = int(result.output.split()[1])
    assert used_kib <= 4096
    small.run("rm -f /dev/shm/fill")


def test_no_message_queue_can_be_made(small: Canal) -> None:
    result = small.run("python3 -c \"import ctypes, os; rt = ctypes.CDLL('librt.so.1', use_errno=True); "
                       "fd = rt.mq_open(b'/stash', os.O_CREAT | os.O_RDWR, 0o600, None); "
                       "print('fd', fd, 'errno', ctypes.get_errno())\"")
    assert "fd -1" in result.output, result.text


def test_a_detached_daemon_is_gone_right_after_its_command(small: Canal) -> None:
    started = small.run("setsid nohup sleep 300 >/dev/null 2>&1 < /dev/null & disown; "
                        "(sleep 301 &) ; echo started")
    assert started.status == "ok", started.text
    left = small.run("ps -eo args | grep -c '^sleep 30[01]' || true")
    assert left.output.strip() == "0", left.text
