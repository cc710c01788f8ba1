from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from canal.host.audit import AuditLog, verify_log
from canal.host.audit.record import canonical

KEY = b"k" * 32
KEY_ID = "k-test"
Fill = Callable[[AuditLog, int], list[str]]


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def write(path: Path, parts: list[bytes]) -> None:
    path.write_bytes(b"".join(parts))


def resign(line: bytes, key: bytes, **changes: object) -> bytes:
    """A self-consistent record (digest and HMAC recomputed) signed with ``key``."""
    raw = json.loads(line)
    body = {k: v for k, v in raw.items() if k not in ("digest", "hash")} | changes
    payload = canonical(body)
    signed = {**body, "digest": hashlib.sha256(payload).hexdigest(),
              "hash": hmac.new(key, payload, hashlib.sha256).hexdigest()}
    return canonical(signed) + b"\n"


@pytest.fixture
def five(log: AuditLog, log_path: Path, fill: Fill) -> Path:
    fill(log, 5)
    return log_path


def test_intact_log_verifies(five: Path) -> None:
    report = verify_log(five, KEY, KEY_ID)
    assert report.ok
    assert report.records == 5
    assert report.head.seq == 5
    assert report.to_json()["status"] == "ok"


def test_missing_log_is_an_empty_intact_log(tmp_path: Path) -> None:
    report = verify_log(tmp_path / "none.jsonl", KEY, KEY_ID)
    assert report.ok
    assert report.records == 0


def test_edited_record_is_named_at_its_line(five: Path) -> None:
    parts = lines(five)
    parts[2] = parts[2].replace(b'"text":"line 3"', b'"text":"line X"')
    write(five, parts)
    report = verify_log(five, KEY, KEY_ID)
    assert report.problem is not None
    assert (report.problem.line, report.problem.kind) == (3, "edited")
    assert report.records == 2


def test_deleted_record_is_named_at_the_line_after_the_gap(five: Path) -> None:
    parts = lines(five)
    del parts[2]
    write(five, parts)
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (3, "deleted")
    assert "record 3 missing" in problem.message


def test_deleted_first_record_is_caught(five: Path) -> None:
    write(five, lines(five)[1:])
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (1, "deleted")


def test_reordered_records_are_named(five: Path) -> None:
    parts = lines(five)
    parts[1], parts[3] = parts[3], parts[1]
    write(five, parts)
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (2, "reordered")
    assert "record 2 is at line 4" in problem.message


def test_duplicated_record_is_a_reorder(five: Path) -> None:
    parts = lines(five)
    write(five, [*parts[:3], parts[1], *parts[3:]])
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (4, "reordered")


def test_partial_last_line_is_truncation(five: Path) -> None:
    data = five.read_bytes()
    five.write_bytes(data[:-20])
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (5, "truncated")


def test_record_signed_with_another_key_is_forged(five: Path) -> None:
    parts = lines(five)
    parts[3] = resign(parts[3], b"x" * 32, data={"i": 4, "text": "forged"})
    write(five, parts)
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (4, "forged")


def test_appended_forgery_with_another_key_id_is_named(five: Path) -> None:
    parts = lines(five)
    parts.append(resign(parts[4], b"x" * 32, seq=6, key_id="k-other",
                        prev_hash=json.loads(parts[4])["hash"]))
    write(five, parts)
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (6, "forged")
    assert "k-other" in problem.message


def test_rechained_records_with_the_right_key_but_new_content_still_break_the_chain(five: Path) -> None:
    parts = lines(five)
    parts[1] = resign(parts[1], KEY, data={"i": 2, "text": "rewritten by a key holder"})
    write(five, parts)
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (3, "deleted")
    assert "prev_hash" in problem.message


def test_line_that_is_not_a_record_is_corrupt(five: Path) -> None:
    parts = lines(five)
    parts[1] = b'{"hello":"world"}\n'
    write(five, parts)
    problem = verify_log(five, KEY, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (2, "corrupt")


def test_wrong_key_fails_at_line_one(five: Path) -> None:
    problem = verify_log(five, b"z" * 32, KEY_ID).problem
    assert problem is not None
    assert (problem.line, problem.kind) == (1, "forged")
