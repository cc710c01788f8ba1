"""Copies of the log off the host: exported records, and checking such a copy against the local log.

An export is the log's own lines, byte for byte (``digest``, ``hash``, ``prev_hash`` and ``seq`` included),
so whoever holds a copy can tell later whether the host's log still says the same: ``verify_export`` checks
each exported record's digest and HMAC, the chain inside the copy, the chain into the log where the copy
starts, and that the log holds the very same record (same hash) at every exported seq. A copy edited after
export fails on its own (``edited``, ``forged``, ``deleted``); a log rewritten on the host after the copy was
taken fails against it (``diverged``, or ``truncated`` when the log lost records the copy has).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.host.audit.reader import iter_lines
from canal.host.audit.record import GENESIS_HASH, MalformedRecord, Record, parse_line
from canal.host.audit.verify import Head, Kind, Problem, check_record


def exported_lines(log_path: Path, *, since: str = "", after_seq: int = 0) -> Iterator[bytes]:
    """The log's lines (each with its newline) whose ``ts`` is at or after ``since`` and whose seq is above
    ``after_seq``. The caller verifies the log first: an export of a tampered log would launder it."""
    for line in iter_lines(log_path):
        if not line.complete:
            return
        rec = parse_line(line.text)
        if rec.seq > after_seq and rec.ts >= since:
            yield line.text + b"\n"


@dataclass(frozen=True)
class ExportReport:
    path: str
    records: int
    first: int  # seq of the first exported record (0 when the copy is empty)
    last: int
    problem: Problem | None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_json(self) -> dict[str, Any]:
        return {"status": "ok" if self.ok else "tampered", "export": self.path, "records": self.records,
                "first": self.first, "last": self.last,
                "problem": None if self.problem is None else self.problem.to_json()}


def verify_export(export_path: Path, log_path: Path, key: bytes, key_id: str, *,
                  earlier_keys: Mapping[str, bytes] | None = None) -> ExportReport:
    """Check a copy (``canal audit export`` output) against the local log; stop at the first bad line."""
    records: list[tuple[int, Record]] = []
    for line in iter_lines(export_path):
        try:
            records.append((line.number, parse_line(line.text)))
        except MalformedRecord as exc:
            return _report(export_path, records, Problem(line.number, "corrupt", f"not a record: {exc}"))
    if not records:
        return _report(export_path, records, None)
    first = records[0][1].seq
    local = _local_hashes(log_path, first - 1, records[-1][1].seq)
    prev = Head(0, GENESIS_HASH) if first == 1 else Head(first - 1, local.get(first - 1, ""))
    if first > 1 and not prev.hash:
        problem = Problem(1, "truncated", f"the log has no record {first - 1}, which the copy chains to")
        return _report(export_path, records, problem)
    for number, rec in records:
        found = check_record(rec, key, key_id, prev, earlier_keys) or _against_log(rec, local)
        if found is not None:
            return _report(export_path, records, Problem(number, *found))
        prev = Head(rec.seq, rec.hash)
    return _report(export_path, records, None)


def _against_log(rec: Record, local: Mapping[int, str]) -> tuple[Kind, str] | None:
    held = local.get(rec.seq)
    if held is None:
        return "truncated", f"the log has no record {rec.seq}, which the copy holds: the log lost records"
    if held != rec.hash:
        return "diverged", (f"record {rec.seq} of the copy differs from the log's: the log was rewritten "
                            "after the copy was taken, or the copy was made from another log")
    return None


def _local_hashes(log_path: Path, low: int, high: int) -> dict[int, str]:
    """seq -> hash of the log's records from ``low`` to ``high`` (unparsable lines are left out)."""
    found: dict[int, str] = {}
    for line in iter_lines(log_path):
        try:
            rec = parse_line(line.text)
        except MalformedRecord:
            continue
        if low <= rec.seq <= high:
            found[rec.seq] = rec.hash
    return found


def _report(path: Path, records: list[tuple[int, Record]], problem: Problem | None) -> ExportReport:
    first = records[0][1].seq if records else 0
    last = records[-1][1].seq if records else 0
    return ExportReport(str(path), len(records), first, last, problem)
