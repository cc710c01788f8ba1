"""Verifying the log: every record's digest and HMAC, and the chain (seq and prev_hash) between them.

Verification stops at the first bad line and names it with one of these kinds:

- ``edited``: the record's content no longer matches its own digest
- ``forged``: a self-consistent record whose HMAC is not from this log's key (or names another key id)
- ``deleted``: a seq gap or a broken ``prev_hash`` (records removed, or one replaced)
- ``reordered``: a record out of sequence whose missing predecessor appears later in the file
- ``truncated``: a partial last line, or fewer records than a checkpoint covers
- ``corrupt``: a line that is not a record at all
- ``rewritten``: the record a checkpoint covers has another hash now
- ``foreign``: the log opens with another project's id (swapped for another project's log)
- ``unbound``: the log does not open with a record naming its project at all
- ``diverged``: an exported copy and the log hold different records at the same seq (``audit.export``)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from canal.host.audit.reader import iter_lines
from canal.host.audit.record import GENESIS_HASH, OPENED_EVENT, MalformedRecord, Record, parse_line

Kind = Literal["edited", "forged", "deleted", "reordered", "truncated", "corrupt", "rewritten", "foreign",
               "unbound", "diverged"]


@dataclass(frozen=True)
class Problem:
    line: int
    kind: Kind
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class Head:
    """Where a verified chain ends (what a checkpoint signs)."""

    seq: int
    hash: str


@dataclass(frozen=True)
class VerifyReport:
    path: str
    records: int
    head: Head
    problem: Problem | None
    checkpoint: Head | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_json(self) -> dict[str, Any]:
        return {"status": "ok" if self.ok else "tampered", "path": self.path, "records": self.records,
                "head": {"seq": self.head.seq, "hash": self.head.hash},
                "checkpoint": None if self.checkpoint is None else
                {"seq": self.checkpoint.seq, "hash": self.checkpoint.hash},
                "problem": None if self.problem is None else self.problem.to_json()}


def check_record(rec: Record, key: bytes, key_id: str, prev: Head,
                 earlier_keys: Mapping[str, bytes] | None = None) -> tuple[Kind, str] | None:
    """Why ``rec`` cannot follow ``prev`` in a log signed with ``key`` (None when it can).

    ``earlier_keys`` (key id -> key) admits records signed before a key rotation.
    """
    if earlier_keys and rec.key_id != key_id and rec.key_id in earlier_keys:
        key, key_id = earlier_keys[rec.key_id], rec.key_id
    if not rec.digest_ok():
        return "edited", f"record {rec.seq} was edited: its content no longer matches its digest"
    if rec.key_id != key_id:
        return "forged", f"record {rec.seq} is signed with key {rec.key_id!r}; this log uses {key_id!r}"
    if not rec.hmac_ok(key):
        return "forged", f"record {rec.seq} has an HMAC that this host's key did not make"
    if rec.seq <= prev.seq:
        return "reordered", f"record {rec.seq} appears after record {prev.seq}"
    if rec.seq != prev.seq + 1:
        missing = _span(prev.seq + 1, rec.seq - 1)
        return "deleted", f"record {missing} missing: record {rec.seq} follows record {prev.seq}"
    if rec.prev_hash != prev.hash:
        return "deleted", (f"record {rec.seq} does not chain to record {prev.seq} (prev_hash differs): "
                           "a record before it was removed or replaced")
    return None


def binding_problem(rec: Record, project_id: str) -> tuple[Kind, str] | None:
    """Why the first record ``rec`` does not open the log of ``project_id`` (None when it does)."""
    if rec.event != OPENED_EVENT:
        return "unbound", (f"record {rec.seq} is {rec.event!r}, not the {OPENED_EVENT} record that names "
                           "the project: this log is not bound to any project")
    named = rec.data.get("project_id")
    if named != project_id:
        return "foreign", (f"the log opens for project {named!r}, not {project_id!r}: it is another "
                           "project's log")
    return None


def verify_log(path: Path, key: bytes, key_id: str, *, checkpoint: Head | None = None,
               earlier_keys: Mapping[str, bytes] | None = None,
               project_id: str | None = None) -> VerifyReport:
    """``project_id``: the log must open with a record naming this project (``audit.opened``)."""
    head, count, last_number = Head(0, GENESIS_HASH), 0, 0
    problem: Problem | None = None
    for line in iter_lines(path):
        last_number = line.number
        if not line.complete:
            problem = Problem(line.number, "truncated",
                              f"partial last line ({len(line.text)} bytes, no newline): a cut or torn write")
            break
        try:
            rec = parse_line(line.text)
        except MalformedRecord as exc:
            problem = Problem(line.number, "corrupt", f"not a record: {exc}")
            break
        found = check_record(rec, key, key_id, head, earlier_keys)
        if found is None and count == 0 and project_id is not None:
            found = binding_problem(rec, project_id)
        if found is not None:
            problem = _refine(path, line.end, head, Problem(line.number, *found))
            break
        if checkpoint is not None and rec.seq == checkpoint.seq and rec.hash != checkpoint.hash:
            problem = Problem(line.number, "rewritten",
                              f"record {rec.seq} differs from the checkpoint (the log was rewritten)")
            break
        head, count = Head(rec.seq, rec.hash), count + 1
    if problem is None and checkpoint is not None and head.seq < checkpoint.seq:
        problem = Problem(last_number + 1, "truncated",
                          f"the log ends at record {head.seq} but the checkpoint covers record "
                          f"{checkpoint.seq}: records {_span(head.seq + 1, checkpoint.seq)} were removed")
    return VerifyReport(str(path), count, head, problem, checkpoint)


def _refine(path: Path, after: int, head: Head, problem: Problem) -> Problem:
    """A seq gap whose missing record shows up later is a reorder, not a deletion."""
    if problem.kind != "deleted" or "missing" not in problem.message:
        return problem
    wanted = head.seq + 1
    for line in iter_lines(path, start=after, first_number=problem.line + 1):
        try:
            rec = parse_line(line.text)
        except MalformedRecord:
            continue
        if rec.seq == wanted:
            where = f"record {wanted} is at line {line.number}"
            return Problem(problem.line, "reordered", f"line {problem.line} holds a later record; {where}")
    return problem


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}..{last}"
