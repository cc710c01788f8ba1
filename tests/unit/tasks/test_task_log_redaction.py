"""A task's log is redacted as it is written: no secret reaches the file, even in pieces."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from canal.host.redact import Redactor
from canal.runtime.tasks import output
from canal.runtime.tasks.output import TaskLog

TOKEN = "ghp_" + "a1B2" * 9
KEY = ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7bq9" * 3 + "\nAbCdEf0123456789+/ZZ\n"
       "-----END RSA PRIVATE KEY-----\n")


def new_log(tmp_path: Path) -> TaskLog:
    return TaskLog(tmp_path / "out", "t-abcdef", None, Redactor(b"k" * 32).redact_keep_lines)


def test_a_token_split_across_writes_never_reaches_the_file(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    log.write("stdout", b"start\ntoken=" + TOKEN[:10].encode())
    assert TOKEN[:10].encode() not in log.path.read_bytes()  # the partial line waits for the rest
    log.write("stderr", TOKEN[10:].encode() + b"\nafter\n")
    log.close()
    data = log.path.read_bytes()
    assert TOKEN.encode() not in data
    assert data.startswith(b"start\ntoken=[REDACTED_SECRET:github-pat:")
    assert data.endswith(b"]\nafter\n")
    assert (log.size, log.received) == (len(data), len(b"start\ntoken=") + len(TOKEN) + len(b"\nafter\n"))
    assert log.path.stat().st_mode & 0o777 == 0o600


def test_a_private_key_written_line_by_line_is_seen_whole(tmp_path: Path) -> None:
    log = new_log(tmp_path)
    for line in KEY.splitlines(keepends=True):
        log.write("stdout", line.encode())
        assert b"MIIEowIBAAKCAQEA" not in log.path.read_bytes()
    log.close()
    data = log.path.read_bytes()
    assert b"MIIEowIBAAKCAQEA" not in data
    assert b"[REDACTED_SECRET:" in data
    assert data.count(b"\n") == KEY.count("\n")  # line numbers stay true


def test_quiet_output_is_written_after_the_hold_and_readers_wake(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "HOLD_S", 0.05)
    log = new_log(tmp_path)
    log.write("stdout", b"first\n")
    assert log.size == 0  # held back for the overlap
    time.sleep(0.06)
    assert log.wait(0, 0.01)  # a waiting reader settles it
    assert log.path.read_bytes() == b"first\n"
    log.write("stdout", b"second\nthird")
    log.close()
    assert log.path.read_bytes() == b"first\nsecond\nthird"


def test_output_the_redactor_cannot_clean_is_dropped_not_written(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "out", "t-abcdef", None, lambda text: text.replace("\n", " "))
    log.write("stdout", b"secret=" + TOKEN.encode() + b"\n")
    log.close()
    data = log.path.read_bytes()
    assert TOKEN.encode() not in data
    assert data == (b"[canal: output not kept, it could not be redacted: "
                    b"the redactor changed the number of lines]\n")


def test_many_small_writes_are_redacted_in_batches(tmp_path: Path) -> None:
    """The redactor sees the overlap again each time it runs: one run per write would cost a scan of
    64 KiB or more per line a chatty task prints."""
    calls: list[int] = []
    keep = Redactor(b"k" * 32).redact_keep_lines

    def counting(text: str) -> str:
        calls.append(len(text))
        return keep(text)

    log = TaskLog(tmp_path / "out", "t-abcdef", None, counting)
    lines = [f"line {i} of a chatty server\n".encode() for i in range(10_000)]
    for line in lines:
        log.write("stdout", line)
    log.close()
    assert log.path.read_bytes() == b"".join(lines)
    assert len(calls) <= 12, len(calls)
