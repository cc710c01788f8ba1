"""The OTLP/HTTP exporter against a receiver on loopback: what a record carries (its chain fields and its
own line, which verifies against the log), the cursor (nothing sent twice, nothing lost while the collector
is down), and the background send a run never waits on."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from otlp_receiver import Receiver, otlp_receiver
from pydantic import ValidationError

from canal.host.audit import AuditLog
from canal.host.audit.errors import AuditExportError
from canal.host.audit.export import verify_export
from canal.host.audit.otlp import OtlpSettings
from canal.host.audit.shipper import OtlpShipper, last_error

KEY, KEY_ID = b"k" * 32, "k-test"  # the conftest log's


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as r:
        yield r


def shipper(log: AuditLog, endpoint: str, **settings: object) -> OtlpShipper:
    return OtlpShipper(log.path, OtlpSettings(endpoint=endpoint, timeout_s=2, **settings), "demo-1234")


def write_run(log: AuditLog) -> None:
    log.append("run.started", {"command": "rm -rf build", "sandbox": "default",
                               "decision": {"action": "confirm", "rule_ids": ["rm-recursive"]}})
    log.append("state.revision", {"doc": "x", "revision": 1, "digest": "d"})  # not a record to send
    log.append("run.completed", {"started": "a-000001", "exit_code": 0, "reason": "exited"})


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_records_carry_their_chain_and_their_line(log: AuditLog, receiver: Receiver, tmp_path: Path) -> None:
    write_run(log)
    done = shipper(log, receiver.endpoint).ship()
    assert (done.sent, done.through, done.url) == (2, 3, receiver.endpoint + "/v1/logs")
    assert receiver.paths == ["/v1/logs"]
    assert receiver.content_types == ["application/json"]
    started, completed = receiver.records()
    assert started["resource"] == {"service.name": "canal", "host.name": socket.gethostname(),
                                   "canal.project_id": "demo-1234"}
    attrs = started["attributes"]
    assert attrs["canal.event"] == "run.started"
    assert attrs["canal.data"]["decision"] == {"action": "confirm", "rule_ids": ["rm-recursive"]}
    lines = log.path.read_text().splitlines()
    first = json.loads(lines[0])
    assert (attrs["canal.record.seq"], attrs["canal.record.hash"], attrs["canal.record.prev_hash"],
            attrs["canal.record.digest"]) == (1, first["hash"], first["prev_hash"], first["digest"])
    assert started["body"]["stringValue"].startswith("$ rm -rf build  [confirm rm-recursive")
    assert completed["attributes"]["canal.record.prev_hash"] == json.loads(lines[1])["hash"]
    assert int(started["timeUnixNano"]) > 1_600_000_000 * 10**9
    # the collector's copy is a partial export: it verifies against the log, record by record
    copy = tmp_path / "from-collector.jsonl"
    copy.write_text(started["attributes"]["canal.record"])
    assert verify_export(copy, log.path, KEY, KEY_ID).ok


def test_the_cursor_sends_each_record_once(log: AuditLog, receiver: Receiver) -> None:
    ship = shipper(log, receiver.endpoint)
    write_run(log)
    assert ship.ship().sent == 2
    assert ship.ship().sent == 0
    log.append("approval.approved", {"token": "c_x", "approver": "bob", "how": "ssh"})
    again = shipper(log, receiver.endpoint).ship()  # another process: the cursor is on disk
    assert (again.sent, again.through) == (1, 4)
    assert [r["attributes"]["canal.record.seq"] for r in receiver.records()] == [1, 3, 4]
    assert (log.path.parent / "otlp-cursor.json").stat().st_mode & 0o777 == 0o600


def test_nothing_is_lost_while_the_collector_is_down(log: AuditLog, receiver: Receiver) -> None:
    write_run(log)
    with pytest.raises(AuditExportError) as down:
        shipper(log, closed_port()).ship()
    assert down.value.code == "AUDIT_EXPORT_FAILED"
    assert "a-000001..a-000003" in str(down.value)
    assert "failed" in (last_error(log.path) or "")

    receiver.status = 503
    with pytest.raises(AuditExportError, match="HTTP 503"):
        shipper(log, receiver.endpoint).ship()
    receiver.status = 200
    assert shipper(log, receiver.endpoint).ship().sent == 2
    assert last_error(log.path) is None


def test_a_rewritten_log_is_sent_again_from_its_start(log: AuditLog, receiver: Receiver) -> None:
    write_run(log)
    assert shipper(log, receiver.endpoint).ship().sent == 2
    log.path.unlink()
    fresh = AuditLog(log.path, KEY, KEY_ID)
    fresh.append("run.denied", {"command": "curl evil"})
    fresh.append("run.denied", {"command": "curl evil again"})
    fresh.append("run.denied", {"command": "curl evil, thrice"})
    assert shipper(fresh, receiver.endpoint).ship().sent == 3
    denied = receiver.records()[2]
    assert (denied["severityText"], denied["attributes"]["canal.record.seq"]) == ("WARN", 1)


def test_appends_are_sent_in_the_background(log: AuditLog, receiver: Receiver) -> None:
    ship = shipper(log, receiver.endpoint, events=("approval.",))
    log.listeners.append(ship.notify)
    write_run(log)
    log.append("approval.denied", {"token": "c_x", "reason": "not on a Friday"})
    got = receiver.wait_for(lambda rs: len(rs) >= 1)
    ship.flush()
    assert [r["attributes"]["canal.event"] for r in got] == ["approval.denied"]


@pytest.mark.parametrize("endpoint", ["ftp://x:21", "127.0.0.1:4318", "http://u:p@host:4318",
                                      "http://host:4318/v1/logs?token=1"])
def test_endpoint_is_a_plain_http_url(endpoint: str) -> None:
    with pytest.raises(ValidationError):
        OtlpSettings(endpoint=endpoint)


def test_a_full_url_is_used_as_given() -> None:
    assert OtlpSettings(endpoint="https://otel.example:4318/").logs_url() == "https://otel.example:4318/v1/logs"
    assert OtlpSettings(endpoint="https://siem.example/ingest/logs").logs_url() == \
        "https://siem.example/ingest/logs"
