from __future__ import annotations

from canal.host.audit import AuditLog, Decision, RunCompleted, RunStarted, parse_line, summarize


def test_pipeline_events_round_trip_and_read_well(log: AuditLog) -> None:
    started = RunStarted(sandbox="default", container_id="c0ffee", image_digest="sha256:1",
                         command="rm -rf b",
                         cwd="/workspace", decision=Decision("confirm", ("rm-recursive",), "standard", "ph"),
                         approver="alice", approval="c_k3j9x2mqa7fe")
    rid = log.append(started.event, started.data())
    done = RunCompleted(started=rid, sandbox="default", exit_code=137, reason="oom", duration_ms=1500,
                        output_bytes=10, output_sha256="ab" * 32, extra={"output_file": "/canal/output/1"})
    log.append(done.event, done.data())
    first, second = (parse_line(line.text) for line in log.lines())
    assert first.data["decision"]["rule_ids"] == ["rm-recursive"]
    assert second.data["output_file"] == "/canal/output/1"
    assert summarize(first) == "$ rm -rf b  [confirm rm-recursive | sandbox default | approved by alice]"
    assert summarize(second) == "exit 137 oom 1.50s, 10 bytes sha256 abababababab (for a-000001)"
