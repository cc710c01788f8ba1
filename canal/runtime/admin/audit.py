"""``Canal.audit``: read, verify and copy off the project's audit log (``host/audit/``).

``show``, ``search``, ``verify`` and ``export`` only read (``AuditAPI``: through the server too). In-process
only: ``checkpoint`` (a head signed with the audit key), ``verify_copy`` (a copy at a host path), ``ship``
(to the OTLP collector) and ``record``, with which a front end records its own events (a console login, a
refused request): a caller of the server cannot write a record of its choosing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from canal.core.next import act
from canal.host.audit import (
    AUDIT_LOG_FOREIGN,
    AUDIT_LOG_MISSING,
    AUDIT_TAMPERED,
    Checkpoint,
    Record,
    make_checkpoint,
    parse_line,
    read_checkpoint,
    summarize,
    verify_log,
)
from canal.host.audit.dangling import find_dangling
from canal.host.audit.export import ExportReport, exported_lines, verify_export
from canal.host.audit.log import utc_timestamp
from canal.host.audit.record import MalformedRecord
from canal.host.audit.shipper import Shipped, shipper_for
from canal.host.audit.verify import Head, VerifyReport
from canal.runtime.errors import ConfigError
from canal.runtime.services import AUDIT_PURPOSE, Services

SEARCH_LIMIT = 300


class AuditEntry(BaseModel):
    """One record as read (``to_json`` is its ``--json`` form) and its one-line summary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    seq: int
    ts: str
    event: str
    actor: str
    data: dict[str, Any]
    key_id: str
    prev_hash: str
    hash: str
    summary: str

    @classmethod
    def of(cls, rec: Record) -> AuditEntry:
        return cls(**rec.to_json(), summary=summarize(rec))

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude={"summary"})


class Unreadable(BaseModel):
    """A line of the log that is not a record (``audit verify`` says what it means for the chain)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int
    message: str


class AuditRecords(BaseModel):
    """The records ``show`` chose, oldest first; ``dangling``: ids of runs whose process stopped before
    their outcome was recorded (every one in the log)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    records: list[AuditEntry]
    dangling: list[str]
    unreadable: list[Unreadable]


class AuditSearch(BaseModel):
    """The newest records of a kind holding a text (at most ``limit``, newest first), how many matched,
    every event name in the log, and the log's verify report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    report: VerifyReport
    kinds: list[str]
    shown: list[AuditEntry]
    matched: int


class AuditExport(BaseModel):
    """The log's lines exactly as it holds them (chain hashes included), for a copy off the host."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    lines: list[bytes]

    def span(self) -> tuple[str, str] | None:
        """The ids of the first and last record copied (None: nothing was)."""
        return (parse_line(self.lines[0]).id, parse_line(self.lines[-1]).id) if self.lines else None


class Audit:
    def __init__(self, services: Services) -> None:
        self._services = services

    def _keys(self) -> tuple[bytes, str, dict[str, bytes]]:
        """The current audit key, its id, and every usable key by id (records from before a rotation)."""
        keys = self._services.keys
        return keys.derive(AUDIT_PURPOSE), keys.primary_id, keys.derive_all(AUDIT_PURPOSE)

    # -- reading (AuditAPI) ---------------------------------------------------------------------
    def show(self, *, since: str = "", event: str = "") -> AuditRecords:
        """The records at or after ``since`` (a timestamp as records write them, ISO UTC; "" for all)
        whose event starts with ``event``, oldest first. Does not verify (``verify`` does)."""
        log = self._services.audit
        shown, unreadable = [], []
        for line in log.lines():
            try:
                rec = parse_line(line.text)
            except MalformedRecord as exc:
                unreadable.append(Unreadable(line=line.number, message=str(exc)))
                continue
            if rec.ts >= since and rec.event.startswith(event):
                shown.append(AuditEntry.of(rec))
        dangling = sorted({d.started for d in find_dangling(log.path)})
        return AuditRecords(path=str(log.path), records=shown, dangling=dangling, unreadable=unreadable)

    def search(self, *, kind: str = "", text: str = "", limit: int = SEARCH_LIMIT) -> AuditSearch:
        """The records of ``kind`` (an event, or the prefix before its dot) whose line holds ``text`` (any
        case), newest first, and the log's verify report (a tampered log is reported, not raised)."""
        log = self._services.audit
        key, key_id, earlier = self._keys()
        report = verify_log(log.path, key, key_id, earlier_keys=earlier, project_id=log.project_id)
        kinds: set[str] = set()
        matched: list[AuditEntry] = []
        needle = text.lower()
        for line in log.lines():
            try:
                rec = parse_line(line.text)
            except MalformedRecord:
                continue
            kinds.add(rec.event)
            if kind and not (rec.event == kind or rec.event.startswith(kind.rstrip(".") + ".")):
                continue
            if needle and needle not in line.text.decode(errors="replace").lower():
                continue
            matched.append(AuditEntry.of(rec))
        shown = list(reversed(matched[-limit:])) if limit > 0 else []
        return AuditSearch(report=report, kinds=sorted(kinds), shown=shown, matched=len(matched))

    def verify(self, *, checkpoint: str | None = None) -> VerifyReport:
        """Check every record's signature and the chain, and (``checkpoint``: the text ``canal audit
        checkpoint`` printed) that no record it covers was cut. Raises ``AUDIT_TAMPERED``,
        ``AUDIT_LOG_FOREIGN`` or ``AUDIT_LOG_MISSING`` naming the first bad line and why."""
        log = self._services.audit
        key, key_id, earlier = self._keys()
        head: Head | None = None
        if checkpoint is not None:
            head = read_checkpoint(checkpoint, key, key_id).head
        report = verify_log(log.path, key, key_id, checkpoint=head, earlier_keys=earlier,
                            project_id=log.project_id)
        _raise_if_tampered(report)
        self._raise_if_missing(report)
        return report

    def export(self, *, since: str = "", after: str | None = None) -> AuditExport:
        """The log's lines at or after ``since`` (as ``show``) and after record ``after`` (``a-000042``,
        where the last copy ended), exactly as written; the log is verified first (a copy of a tampered
        log would launder it)."""
        log = self._services.audit
        key, key_id, earlier = self._keys()
        report = verify_log(log.path, key, key_id, earlier_keys=earlier, project_id=log.project_id)
        _raise_if_tampered(report)
        return AuditExport(lines=list(exported_lines(log.path, since=since, after_seq=_seq_of(after))))

    # -- in-process only ------------------------------------------------------------------------
    def verify_copy(self, copy: Path) -> ExportReport:
        """Check a copy made by ``export`` (at a host path) and that the log still holds its records;
        ``AUDIT_TAMPERED`` at the first line that differs."""
        key, key_id, earlier = self._keys()
        report = verify_export(copy, self._services.audit.path, key, key_id, earlier_keys=earlier)
        _raise_if_copy_differs(report)
        return report

    def checkpoint(self) -> Checkpoint:
        """Verify the log, then sign its head with the audit key, to be kept where the agent cannot write."""
        log = self._services.audit
        key, key_id, earlier = self._keys()
        report = verify_log(log.path, key, key_id, earlier_keys=earlier)
        _raise_if_tampered(report)
        return make_checkpoint(report.head, str(log.path), key, key_id, utc_timestamp())

    def ship(self) -> Shipped:
        """Send the records the OTLP collector (``audit.otlp``) has not had yet, now."""
        services = self._services
        settings = services.config.audit.otlp
        if settings is None:
            msg = "no OTLP collector is configured (audit.otlp in canal.yaml)"
            raise ConfigError(msg, hint="add audit: {otlp: {endpoint: http://HOST:4318}} to canal.yaml",
                              next=act("config.approve"))
        return shipper_for(services.audit.path, settings, services.project_id).ship()

    def record(self, event: str, data: dict[str, Any], *, actor: str) -> None:
        """Record a front end's own event (``console.login``, ``swerex.refused``...)."""
        self._services.audit.append(event, data, actor=actor)

    def _raise_if_missing(self, report: VerifyReport) -> None:
        """No record at all, yet the project has state only runs leave: the log was emptied or deleted."""
        services = self._services
        if report.records > 0 or not services.has_history():
            return
        what = "empty" if Path(report.path).exists() else "missing"
        msg = (f"audit log {report.path} is {what}, but the project has state that its runs recorded "
               f"({services.state_dir}): the log was emptied or deleted")
        raise AUDIT_LOG_MISSING(msg, hint=f"restore {report.path} from a backup, or compare with an "
                                "off-host checkpoint", next=act("audit.verify", checkpoint="FILE"),
                                details=report.to_json())


def _seq_of(record_id: str | None) -> int:
    if record_id is None:
        return 0
    found = re.fullmatch(r"a-(\d+)", record_id.strip())
    if found is None:
        msg = f"--after {record_id!r} is not a record id like a-000042"
        raise ConfigError(msg, next=act("audit.show", "the first column is the record id"))
    return int(found.group(1))


def _raise_if_copy_differs(copy: ExportReport) -> None:
    if copy.problem is None:
        return
    p = copy.problem
    msg = f"audit export {copy.path}, line {p.line}: {p.kind}: {p.message}"
    raise AUDIT_TAMPERED(msg, hint=f"keep {copy.path} and the log as evidence, and compare them",
                         next=act("audit.show", json=True), details=copy.to_json())


def _raise_if_tampered(report: VerifyReport) -> None:
    if report.problem is None:
        return
    p = report.problem
    msg = f"audit log {report.path}, line {p.line}: {p.kind}: {p.message}"
    error = AUDIT_LOG_FOREIGN if p.kind in ("foreign", "unbound") else AUDIT_TAMPERED
    raise error(msg, hint=f"keep a copy of {report.path} as evidence before anything else, and inspect it",
                next=act("audit.show", json=True), details=report.to_json())
