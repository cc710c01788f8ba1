from __future__ import annotations

import io
import stat
from pathlib import Path

import pytest

from canal.sandbox.errors import FILE_TRANSFER_REFUSED
from canal.sandbox.files import pack, unpack
from canal.sandbox.outcome import Call, to_result
from canal.sandbox.protocol import RunReply
from canal.sandbox.result import EMPTY, EndReason
from canal.sandbox.spool import Spool
from tests.error_codes import raises_code

CALL = Call(timeout_s=5.0, idle_timeout_s=None, memory_limit_bytes=1024)


@pytest.mark.parametrize(("reply", "reason", "code"), [
    ({"reason": "exited", "exit_code": 3}, EndReason.EXITED, 3),
    ({"reason": "hard_timeout", "exit_code": 137}, EndReason.HARD_TIMEOUT, 124),
    ({"reason": "idle_timeout", "exit_code": 137}, EndReason.IDLE_TIMEOUT, 124),
    ({"reason": "exited", "exit_code": 137, "oom_kills": 1}, EndReason.OOM_KILLED, 137),
    ({"reason": "exited", "exit_code": 0, "pid_limit_hits": 2}, EndReason.KILLED, 0),
    ({"reason": "sandbox_vanished", "exit_code": None}, EndReason.SANDBOX_VANISHED, None),
])
def test_reply_maps_to_reason_and_exit_code(reply: dict[str, object], reason: EndReason,
                                            code: int | None) -> None:
    result = to_result(RunReply.model_validate(reply), EMPTY, EMPTY, 0.1, CALL)
    assert result.reason is reason
    assert result.exit_code == code


def test_limits_and_survivors_are_reported() -> None:
    reply = RunReply.model_validate({"reason": "hard_timeout", "exit_code": 137, "survivors": [42],
                                     "pid_limit_hits": 1})
    result = to_result(reply, EMPTY, EMPTY, 5.0, CALL)
    assert result.limits_hit == ("pids",)
    assert result.survivors == (42,)
    assert "survived" in result.detail
    assert "process limit" in result.detail


def test_spool_keeps_memory_under_cap_and_writes_0600(tmp_path: Path) -> None:
    spool = Spool(10, tmp_path / "spool", "stdout")
    for _ in range(5):
        spool.write(b"abcdef")
    out = spool.finish()
    assert out.spooled
    assert out.data is None
    assert out.size == 30
    assert out.path is not None
    assert stat.S_IMODE(out.path.stat().st_mode) == 0o600
    assert out.read_bytes() == b"abcdef" * 5


def test_spool_small_output_stays_in_memory() -> None:
    spool = Spool(10, None, "stdout")
    spool.write(b"0123456789")
    out = spool.finish()
    assert (out.spooled, out.data) == (False, b"0123456789")


def test_pack_unpack_round_trip_and_limits() -> None:
    files = {"a/b.txt": b"hello", "bin": bytes(range(256))}
    assert unpack(io.BytesIO(pack(files, max_bytes=1000)), max_bytes=1000) == files
    with raises_code(FILE_TRANSFER_REFUSED):
        pack(files, max_bytes=10)
    with raises_code(FILE_TRANSFER_REFUSED):
        unpack(io.BytesIO(pack(files, max_bytes=1000)), max_bytes=100)
    for bad in ("../x", "/etc/passwd", ""):
        with raises_code(FILE_TRANSFER_REFUSED):
            pack({bad: b"x"}, max_bytes=10)
