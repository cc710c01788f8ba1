from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from canal.host.audit import AUDIT_CHECKPOINT_INVALID, AuditLog, make_checkpoint, read_checkpoint, verify_log
from tests.error_codes import raises_code

KEY = b"k" * 32
KEY_ID = "k-test"
TS = "2025-01-01T00:00:00.000000Z"
Fill = Callable[[AuditLog, int], list[str]]


def checkpoint_of(path: Path) -> str:
    report = verify_log(path, KEY, KEY_ID)
    assert report.ok
    return make_checkpoint(report.head, str(path), KEY, KEY_ID, TS).text()


def test_checkpoint_round_trips(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 3)
    cp = read_checkpoint(checkpoint_of(log_path), KEY, KEY_ID)
    assert (cp.seq, cp.key_id) == (3, KEY_ID)
    fill(log, 2)  # the log may grow after a checkpoint
    assert verify_log(log_path, KEY, KEY_ID, checkpoint=cp.head).ok


def test_tail_cut_after_checkpoint_is_detected(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 5)
    cp = read_checkpoint(checkpoint_of(log_path), KEY, KEY_ID)
    log_path.write_bytes(b"".join(log_path.read_bytes().splitlines(keepends=True)[:3]))
    assert verify_log(log_path, KEY, KEY_ID).ok  # the chain alone cannot see it
    problem = verify_log(log_path, KEY, KEY_ID, checkpoint=cp.head).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (4, "truncated")
    assert "records 4..5 were removed" in problem.message


def test_rewritten_history_is_detected(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 2)
    cp = read_checkpoint(checkpoint_of(log_path), KEY, KEY_ID)
    log_path.unlink()
    fill(AuditLog(log_path, KEY, KEY_ID), 3)  # a key holder rebuilt the log from scratch
    problem = verify_log(log_path, KEY, KEY_ID, checkpoint=cp.head).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (2, "rewritten")


def test_checkpoint_with_a_changed_seq_is_refused(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 2)
    text = checkpoint_of(log_path).replace('"seq":2', '"seq":1')
    with raises_code(AUDIT_CHECKPOINT_INVALID) as info:
        read_checkpoint(text, KEY, KEY_ID)
    assert info.value.code == "AUDIT_CHECKPOINT_INVALID"


@pytest.mark.parametrize("text", ["", "{}", "[1]", '{"kind":"canal-audit-checkpoint"}', "not json"])
def test_garbage_checkpoint_is_refused(text: str) -> None:
    with raises_code(AUDIT_CHECKPOINT_INVALID):
        read_checkpoint(text, KEY, KEY_ID)


def test_checkpoint_from_another_key_is_refused(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 1)
    with raises_code(AUDIT_CHECKPOINT_INVALID):
        read_checkpoint(checkpoint_of(log_path), b"z" * 32, KEY_ID)
