from __future__ import annotations

import json
from pathlib import Path

from canal.host.audit import AUDIT_TAMPERED, AuditLog, verify_log
from tests.error_codes import raises_code

KEY = b"k" * 32
KEY_ID = "k-test"


def index_of(log_path: Path) -> Path:
    return log_path.with_name("revisions.json")


def test_latest_revision_follows_records(log: AuditLog) -> None:
    assert log.latest_revision("run/1") is None
    log.record_revision("run/1", 1, "d1")
    log.append("test.event", {})
    log.record_revision("run/2", 1, "e1")
    log.record_revision("run/1", 2, "d2")
    assert log.latest_revision("run/1") == (2, "d2")
    assert log.latest_revision("run/2") == (1, "e1")


def test_another_process_sees_the_same_answer_from_the_index(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 3, "abc")
    assert log.latest_revision("doc") == (3, "abc")
    assert index_of(log_path).exists()
    assert AuditLog(log_path, KEY, KEY_ID).latest_revision("doc") == (3, "abc")


def test_hex_digests_are_never_redacted(log_path: Path) -> None:
    digest = "ab" * 32
    log = AuditLog(log_path, KEY, KEY_ID, redact=lambda s: "[REDACTED_SECRET:hex:1]")
    log.record_revision("doc", 1, digest)
    assert AuditLog(log_path, KEY, KEY_ID).latest_revision("doc") == (1, digest)


def test_the_index_spares_a_rescan_of_older_records(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 1, "a")
    assert log.latest_revision("doc") == (1, "a")  # the index now covers record 1
    data = log_path.read_bytes()
    log_path.write_bytes(data.replace(b'"revision":1', b'"revision":7'))  # same length, breaks record 1
    assert AuditLog(log_path, KEY, KEY_ID).latest_revision("doc") == (1, "a")  # served by the index
    index_of(log_path).unlink()  # without the index the full rebuild reads record 1 and refuses it
    with raises_code(AUDIT_TAMPERED) as info:
        AuditLog(log_path, KEY, KEY_ID).latest_revision("doc")
    assert "edited" in info.value.details["kind"]


def test_unsigned_index_is_rebuilt_from_the_log(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 2, "b")
    log.latest_revision("doc")
    raw = json.loads(index_of(log_path).read_bytes())
    raw["docs"]["doc"] = [9, "forged"]
    index_of(log_path).write_text(json.dumps(raw))
    assert AuditLog(log_path, KEY, KEY_ID).latest_revision("doc") == (2, "b")


def test_log_cut_below_the_index_is_a_rollback(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 1, "a")
    log.record_revision("doc", 2, "b")
    assert log.latest_revision("doc") == (2, "b")
    first = log_path.read_bytes().splitlines(keepends=True)[0]
    log_path.write_bytes(first)  # roll the log back to revision 1
    with raises_code(AUDIT_TAMPERED) as info:
        AuditLog(log_path, KEY, KEY_ID).latest_revision("doc")
    assert "shorter" in info.value.message
    with raises_code(AUDIT_TAMPERED):
        log.latest_revision("doc")  # the in-memory view catches it too


def test_log_replaced_by_another_of_the_same_length_is_caught(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 1, "a")
    log.latest_revision("doc")
    other = tmp_log = log_path.with_name("other.jsonl")
    AuditLog(tmp_log, KEY, KEY_ID, clock=lambda: "2000-01-01T00:00:00.000000Z").record_revision("doc", 1, "b")
    original = log_path.read_bytes()
    replacement = other.read_bytes()
    assert len(original) == len(replacement)
    log_path.write_bytes(replacement)
    with raises_code(AUDIT_TAMPERED) as info:
        AuditLog(log_path, KEY, KEY_ID).latest_revision("doc")
    assert "rewritten or replaced" in info.value.message


def test_catch_up_verifies_new_records(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 1, "a")
    log.latest_revision("doc")
    AuditLog(log_path, b"x" * 32, KEY_ID).record_revision("doc", 5, "forged")
    with raises_code(AUDIT_TAMPERED) as info:
        log.latest_revision("doc")
    assert info.value.details["kind"] == "forged"
    assert not verify_log(log_path, KEY, KEY_ID).ok


def test_partial_last_line_is_skipped_by_the_ledger(log: AuditLog, log_path: Path) -> None:
    log.record_revision("doc", 1, "a")
    with log_path.open("ab") as fh:
        fh.write(b'{"seq":2')
    assert AuditLog(log_path, KEY, KEY_ID).latest_revision("doc") == (1, "a")
