"""The agent's pump reads control frames while a command runs: streamed stdin, end of stdin, kill."""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import time

import pytest

from canal.sandbox.agent.main import ProcRun
from canal.sandbox.agent.pump import Input, Pump


def frame(header: dict[str, object], payload: bytes = b"") -> bytes:
    body = json.dumps({**header, "stdin_len": len(payload)}).encode()
    return struct.pack(">I", len(body)) + body + payload


def out_frames(raw: bytes) -> bytes:
    """Concatenated ``o`` payloads of the agent frames written to fd 1."""
    out, pos = b"", 0
    while pos + 5 <= len(raw):
        kind, length = raw[pos:pos + 1], struct.unpack(">I", raw[pos + 1:pos + 5])[0]
        if kind == b"o":
            out += raw[pos + 5:pos + 5 + length]
        pos += 5 + length
    return out


def start(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def finish(proc: subprocess.Popen[bytes], pump: Pump) -> None:
    proc.kill()
    pump.close()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    proc.wait()


def pump_for(proc: subprocess.Popen[bytes], control: Input, stream: bool = True) -> Pump:
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    return Pump(ProcRun(proc), {proc.stdout.fileno(): b"o", proc.stderr.fileno(): b"e"},
                proc.stdin.fileno(), b"", control, "r1", stream)


def test_streamed_stdin_reaches_the_command_and_late_frames_are_skipped(
        capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    read, write = os.pipe()
    os.write(write, frame({"ctl": "stdin", "id": "r0"}, b"stale\n"))
    proc = start(["cat"])
    pump = pump_for(proc, Input(read))
    os.write(write, frame({"ctl": "stdin", "id": "r1"}, b"hi\n"))
    os.write(write, frame({"ctl": "stdin", "id": "r1"}, b"there\n") + frame({"ctl": "eof", "id": "r1"}))
    assert pump.run(10, None) == "exited"
    finish(proc, pump)
    assert out_frames(capfdbinary.readouterr().out) == b"hi\nthere\n"
    os.close(write)
    os.close(read)


def test_frames_read_together_with_the_request_are_not_lost(
        capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    read, write = os.pipe()
    os.write(write, frame({"ctl": "stdin", "id": "r1"}, b"early\n") + frame({"ctl": "eof", "id": "r1"}))
    control = Input(read)
    control.pull()  # the serve loop read them along with the request: nothing more comes on the fd
    proc = start(["cat"])
    pump = pump_for(proc, control)
    assert pump.run(5, None) == "exited"
    finish(proc, pump)
    assert out_frames(capfdbinary.readouterr().out) == b"early\n"
    os.close(write)
    os.close(read)


def test_a_kill_frame_interrupts_the_command(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    read, write = os.pipe()
    proc = start(["sleep", "30"])
    pump = pump_for(proc, Input(read))
    os.write(write, frame({"ctl": "kill", "id": "r1", "signal": "INT"}))
    began = time.monotonic()
    assert pump.run(20, None) == "interrupted"
    assert time.monotonic() - began < 5
    assert pump.killed == "INT"
    finish(proc, pump)
    os.close(write)
    os.close(read)


def test_the_host_going_away_interrupts_the_command(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    read, write = os.pipe()
    proc = start(["sleep", "30"])
    pump = pump_for(proc, Input(read))
    os.close(write)
    assert pump.run(20, None) == "interrupted"
    assert pump.killed == "host"
    finish(proc, pump)
    os.close(read)


def test_each_heartbeat_takes_the_agents_look(capfdbinary: pytest.CaptureFixture[bytes],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("canal.sandbox.agent.pump.HEARTBEAT_S", 0.05)
    read, write = os.pipe()
    proc = start(["sleep", "0.6"])
    pump = pump_for(proc, Input(read))
    looks: list[float] = []
    assert pump.run(10, None, beat=lambda: looks.append(time.monotonic())) == "exited"
    finish(proc, pump)
    beats = capfdbinary.readouterr().out.count(b"h\x00\x00\x00\x00")
    assert len(looks) == beats >= 4
    os.close(write)
    os.close(read)
