from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from canal.core.errors import ExitCode
from canal.host.audit import (
    AUDIT_LOG_CORRUPT,
    AUDIT_RECORD_INVALID,
    AUDIT_WRITE_FAILED,
    AuditLog,
    parse_line,
    verify_log,
)
from canal.host.audit.log import utc_timestamp
from canal.host.audit.record import GENESIS_HASH, build_line, canonical, sign
from tests.error_codes import raises_code

KEY = b"k" * 32
KEY_ID = "k-test"
Fill = Callable[[AuditLog, int], list[str]]


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def test_append_returns_ids_and_chains_records(log: AuditLog, log_path: Path, fill: Fill) -> None:
    assert fill(log, 3) == ["a-000001", "a-000002", "a-000003"]
    recs = records(log_path)
    assert [r["seq"] for r in recs] == [1, 2, 3]
    assert recs[0]["prev_hash"] == GENESIS_HASH
    assert recs[1]["prev_hash"] == recs[0]["hash"]
    assert recs[2]["prev_hash"] == recs[1]["hash"]
    assert recs[0]["key_id"] == KEY_ID
    assert str(recs[0]["ts"]).endswith("Z")


def test_file_and_folder_are_private(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 1)
    assert stat.S_IMODE(log_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(log_path.parent.stat().st_mode) == 0o700


def test_records_are_canonical_lines(log: AuditLog, log_path: Path) -> None:
    log.append("run.started", {"command": "echo é", "b": 1, "a": [1, 2]}, actor="alice")
    line = log_path.read_bytes().splitlines()[0]
    rec = parse_line(line)
    assert rec.actor == "alice"
    assert "é" in line.decode()
    assert line == json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False).encode()


def test_a_line_is_the_canonical_form_of_its_body_and_signatures() -> None:
    body = {"v": 1, "seq": 7, "ts": "2026-12-01T00:00:00.000001Z", "event": "run.started", "actor": "a",
            "key_id": "k", "prev_hash": GENESIS_HASH,
            "data": {"z": [1, {"é": "\u2028", "b": None}], "a": "x\"y", "n": 1.5, "t": True}}
    line, mac = build_line(body, KEY)
    payload = canonical(body)
    assert mac == sign(KEY, payload)
    assert line == canonical({**body, "digest": hashlib.sha256(payload).hexdigest(), "hash": mac}) + b"\n"


def test_timestamps_are_utc_with_microseconds() -> None:
    before = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    ts = utc_timestamp()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", ts)
    assert datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ") >= before


def test_a_second_instance_continues_the_chain(log_path: Path, fill: Fill) -> None:
    fill(AuditLog(log_path, KEY, KEY_ID), 2)
    assert AuditLog(log_path, KEY, KEY_ID).append("test.event", {}) == "a-000003"
    assert verify_log(log_path, KEY, KEY_ID).ok


def test_redactor_applies_to_strings_but_not_integrity_fields(log_path: Path) -> None:
    log = AuditLog(log_path, KEY, KEY_ID, redact=lambda s: s.replace("hunter2", "[REDACTED_SECRET:pw:1]"))
    log.append("run.started", {"command": "login -p hunter2", "nested": {"list": ["hunter2", 3]},
                               "policy_hash": "hunter2", "exit_code": 0})
    data = records(log_path)[0]["data"]
    assert data == {"command": "login -p [REDACTED_SECRET:pw:1]",
                    "nested": {"list": ["[REDACTED_SECRET:pw:1]", 3]}, "policy_hash": "hunter2",
                    "exit_code": 0}
    assert log_path.read_bytes().count(b"hunter2") == 1  # only the integrity field


def test_an_outcome_s_link_to_its_intent_is_never_redacted(log_path: Path) -> None:
    """``started`` names the intent record an outcome closes (a run without one reads as interrupted):
    an id the log made, which no redactor may alter (nor spend a scan on at every command)."""
    log = AuditLog(log_path, KEY, KEY_ID, redact=lambda s: s.replace("a-0", "[REDACTED_SECRET:x:1]"))
    started = log.append("run.started", {"command": "ls"})
    log.append("run.completed", {"started": started, "note": "after a-000001"})
    data = records(log_path)[1]["data"]
    assert data == {"started": "a-000001", "note": "after [REDACTED_SECRET:x:1]00001"}


@pytest.mark.parametrize("event", ["Run.Started", "run", "run started", ""])
def test_bad_event_names_are_refused(log: AuditLog, event: str) -> None:
    with raises_code(AUDIT_RECORD_INVALID) as info:
        log.append(event, {})
    assert info.value.code == "AUDIT_RECORD_INVALID"


def test_data_that_is_not_json_is_refused_and_nothing_written(log: AuditLog, log_path: Path) -> None:
    with raises_code(AUDIT_RECORD_INVALID):
        log.append("test.event", {"x": float("nan")})
    with raises_code(AUDIT_RECORD_INVALID):
        log.append("test.event", {"x": object()})
    assert log_path.read_bytes() == b""


def test_full_disk_raises_audit_write_failed() -> None:
    log = AuditLog(Path("/dev/full"), KEY, KEY_ID)  # every write fails with ENOSPC
    with raises_code(AUDIT_WRITE_FAILED) as info:
        log.append("run.started", {"command": "true"})
    assert info.value.code == "AUDIT_WRITE_FAILED"
    assert info.value.exit_code == ExitCode.CANAL_ERROR
    assert "No space left" in info.value.message
    assert info.value.details["errno"] == 28


def test_unwritable_folder_raises_audit_write_failed(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    log = AuditLog(blocker / "audit" / "audit.jsonl", KEY, KEY_ID)
    with raises_code(AUDIT_WRITE_FAILED) as info:
        log.append("run.started", {})
    assert "Nothing was run" in info.value.message
    assert info.value.hint


def test_torn_last_line_blocks_appends(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 2)
    with log_path.open("ab") as fh:
        fh.write(b'{"seq":3,"ts"')
    fresh = AuditLog(log_path, KEY, KEY_ID)
    with raises_code(AUDIT_LOG_CORRUPT) as info:
        fresh.append("test.event", {})
    assert "partial" in info.value.message
    assert [a.kind for a in info.value.next] == ["audit.verify"]


def test_garbage_last_line_blocks_appends(log: AuditLog, log_path: Path, fill: Fill) -> None:
    fill(log, 1)
    with log_path.open("ab") as fh:
        fh.write(b"not json\n")
    with raises_code(AUDIT_LOG_CORRUPT):
        AuditLog(log_path, KEY, KEY_ID).append("test.event", {})


def test_symlinked_log_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    link = tmp_path / "audit" / "audit.jsonl"
    link.parent.mkdir()
    link.symlink_to(target)
    with raises_code(AUDIT_WRITE_FAILED):
        AuditLog(link, KEY, KEY_ID).append("test.event", {})


def test_long_records_are_found_as_the_tail(log: AuditLog, log_path: Path) -> None:
    log.append("test.event", {"blob": "x" * 200_000})
    assert AuditLog(log_path, KEY, KEY_ID).append("test.event", {}) == "a-000002"
    assert verify_log(log_path, KEY, KEY_ID).ok


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from canal.host.audit import AuditLog
    log = AuditLog(Path(sys.argv[1]), b"k" * 32, "k-test")
    for i in range(int(sys.argv[3])):
        log.append("test.concurrent", {"writer": sys.argv[2], "i": i})
""")


def test_concurrent_processes_never_fork_the_chain(log_path: Path) -> None:
    writers, each = 4, 40
    root = Path(__file__).resolve().parents[3]
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(log_path), f"w{n}", str(each)], cwd=root)
             for n in range(writers)]
    assert [p.wait(timeout=120) for p in procs] == [0] * writers
    report = verify_log(log_path, KEY, KEY_ID)
    assert report.ok, report.problem
    assert report.records == writers * each
    recs = records(log_path)
    assert [r["seq"] for r in recs] == list(range(1, writers * each + 1))
    per_writer = {f"w{n}": [r["data"]["i"] for r in recs if r["data"]["writer"] == f"w{n}"]  # type: ignore[index]
                  for n in range(writers)}
    assert all(v == list(range(each)) for v in per_writer.values())


def test_the_process_wide_head_is_used_only_while_nobody_else_appended(log_path: Path, fill: Fill) -> None:
    """Each request of the server makes a new AuditLog; it chains to the head this process last wrote,
    but only while the file's inode and size are what that append left: a record another process wrote
    meanwhile (here: written by an instance whose head the process then forgets) is chained to."""
    from canal.host.audit import log as log_module

    fill(AuditLog(log_path, KEY, KEY_ID), 2)
    stale = log_module._HEADS[str(log_path)]
    AuditLog(log_path, KEY, KEY_ID).append("test.other", {})  # "another process"
    log_module._HEADS[str(log_path)] = stale  # ... whose append this process did not see
    assert AuditLog(log_path, KEY, KEY_ID).append("test.event", {}) == "a-000004"
    assert verify_log(log_path, KEY, KEY_ID).ok


def test_sync_covers_what_came_before_it_and_not_what_came_while_it_ran(
        log: AuditLog, log_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        real(fd)
        synced.append(fd)
        if len(synced) == 1:  # another thread appends while this sync runs
            log.append("run.completed", {"exit_code": 0}, durable=False)

    log.append("run.started", {"command": "ls"}, durable=False)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    log.sync()
    assert len(synced) == 1
    log.sync()  # the record appended during the first sync is not on disk yet: this one syncs it
    assert len(synced) == 2
    log.sync()  # nothing new
    assert len(synced) == 2
    log.append("run.started", {"command": "ls"})  # a durable append covers itself
    log.sync()
    assert len(synced) == 3
