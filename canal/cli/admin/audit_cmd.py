"""``canal audit show|verify|checkpoint|export``: read, verify, anchor and copy off the audit log."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from canal.cli.shared import App, echo_json, emit, json_option, pass_app, since_threshold
from canal.core.display import visible
from canal.core.duration import EXAMPLES
from canal.core.fsutil import atomic_write
from canal.host.audit import (
    AUDIT_LOG_FOREIGN,
    AUDIT_LOG_MISSING,
    AUDIT_TAMPERED,
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
from canal.host.audit.shipper import shipper_for
from canal.host.audit.verify import Head, VerifyReport
from canal.runtime.errors import ConfigError
from canal.runtime.services import AUDIT_PURPOSE, Services

DANGLING_MARK = "[no outcome: the process running it stopped; the next command records it as interrupted]"


def audit_keys(services: Services) -> tuple[bytes, str, dict[str, bytes]]:
    """The current audit key, its id, and every usable key by id (records from before a rotation)."""
    keys = services.keys
    return keys.derive(AUDIT_PURPOSE), keys.primary_id, keys.derive_all(AUDIT_PURPOSE)


@click.group("audit")
def audit() -> None:
    """Read and verify the tamper-evident audit log of this project."""


@audit.command("show")
@click.option("--since", help=f"Only records newer than this: a duration ({EXAMPLES}) or an ISO "
              "date/time (UTC).")
@click.option("--event", "event_prefix", help="Only events starting with this, e.g. run. or approval.")
@json_option("Print the records as JSON.")
@pass_app
def show(app: App, since: str | None, event_prefix: str | None, as_json: bool) -> None:
    """Print the audit records, oldest first (does not verify; see `canal audit verify`).

    A run whose process stopped before it finished (a killed server) is marked: it has no outcome.

    Example: canal audit show --since 1h
    """
    log = app.canal.services.audit
    threshold = since_threshold(since, datetime.now(UTC)) if since else ""
    shown = []
    for line in log.lines():
        try:
            rec = parse_line(line.text)
        except MalformedRecord as exc:
            click.echo(f"line {line.number}: not a record ({exc}); run: canal audit verify", err=True)
            continue
        if rec.ts >= threshold and rec.event.startswith(event_prefix or ""):
            shown.append(rec)
    dangling = {d.started for d in find_dangling(log.path)}
    if as_json:
        echo_json({"status": "ok", "path": str(log.path), "records": [r.to_json() for r in shown],
                   "dangling": sorted(dangling)})
        return
    for rec in shown:
        mark = f"  {DANGLING_MARK}" if rec.id in dangling else ""
        click.echo(visible(f"{rec.id} {rec.ts[:19]}Z {rec.event:<16} {rec.actor:<8} {summarize(rec)}{mark}"))
    if not shown:
        click.echo(f"no records in {log.path}", err=True)


@audit.command("verify")
@click.option("--checkpoint", "checkpoint_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A checkpoint from `canal audit checkpoint`: also catches records cut from the tail.")
@click.option("--export", "export_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A copy from `canal audit export`: check it, and that the log still holds its records.")
@json_option("Print the report as JSON.")
@pass_app
def verify(app: App, checkpoint_file: Path | None, export_file: Path | None, as_json: bool) -> None:
    """Check every record's signature and the chain; name the first bad line and why.

    Exit 0 when intact, 1 when tampered (AUDIT_TAMPERED).

    Example: canal audit verify --checkpoint ~/canal-checkpoint.json
    """
    log = app.canal.services.audit
    head: Head | None = None
    key, key_id, earlier = audit_keys(app.canal.services)
    if checkpoint_file is not None:
        head = read_checkpoint(checkpoint_file.read_text(), key, key_id).head
    report = verify_log(log.path, key, key_id, checkpoint=head, earlier_keys=earlier,
                        project_id=log.project_id)
    _raise_if_tampered(report)
    _raise_if_missing(report, app.canal.services)
    if export_file is not None:
        copy = verify_export(export_file, log.path, key, key_id, earlier_keys=earlier)
        _raise_if_copy_differs(copy)
        emit(as_json, {**report.to_json(), "export": copy.to_json()},
             f"ok: the {copy.records} records of {export_file} (a-{copy.first:06d}..a-{copy.last:06d}) match "
             f"the log {log.path} ({report.records} records intact)")
        return
    if as_json:
        echo_json(report.to_json())
        return
    against = f", matches the checkpoint at record {head.seq}" if head else ""
    click.echo(f"ok: {report.records} records intact in {log.path}{against}; "
               f"head a-{report.head.seq:06d} {report.head.hash[:16]}")


@audit.command("checkpoint")
@json_option("Print the checkpoint inside a JSON envelope.")
@pass_app
def checkpoint(app: App, as_json: bool) -> None:
    """Verify the log, then print a signed head (one JSON line) to store somewhere the agent cannot write.

    Example: canal audit checkpoint > ~/canal-checkpoint.json
    """
    log = app.canal.services.audit
    key, key_id, earlier = audit_keys(app.canal.services)
    report = verify_log(log.path, key, key_id, earlier_keys=earlier)
    _raise_if_tampered(report)
    cp = make_checkpoint(report.head, str(log.path), key, key_id, utc_timestamp())
    if as_json:
        echo_json({"status": "ok", "checkpoint": cp.model_dump()})
        return
    click.echo(cp.text())
    click.echo("Store this line outside the machine; later: canal audit verify --checkpoint FILE", err=True)


@audit.command("export")
@click.option("--since", help=f"Only records from this time on: a duration ({EXAMPLES}) or an ISO "
              "date/time (UTC).")
@click.option("--after", "after_id",
              help="Only records after this one (a-000042), where the last copy ended.")
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True,
              help="One record a line, exactly as the log holds it (chain hashes included).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the copy to this file (0600, atomically) instead of stdout.")
@pass_app
def export(app: App, since: str | None, after_id: str | None, fmt: str, output: Path | None) -> None:
    """Copy records off the host (for a SIEM): the log is verified first, then its lines are written as
    they are, so the copy can later be checked against this log with `canal audit verify --export`.

    Example: canal audit export --since 24h --format jsonl -o /mnt/siem/canal-$(date +%F).jsonl
    """
    log = app.canal.services.audit
    key, key_id, earlier = audit_keys(app.canal.services)
    report = verify_log(log.path, key, key_id, earlier_keys=earlier, project_id=log.project_id)
    _raise_if_tampered(report)
    threshold = since_threshold(since, datetime.now(UTC)) if since else ""
    lines = list(exported_lines(log.path, since=threshold, after_seq=_seq_of(after_id)))
    if output is None:
        sys.stdout.buffer.writelines(lines)
        sys.stdout.flush()
    else:
        atomic_write(output, b"".join(lines), private_folder=False)
    span = f" ({parse_line(lines[0]).id}..{parse_line(lines[-1]).id}, {fmt})" if lines else ""
    click.echo(f"exported {len(lines)} records{span} to {output or 'stdout'}; check the copy later with: "
               "canal audit verify --export FILE", err=True)


@audit.command("ship")
@json_option("Print what was sent as JSON.")
@pass_app
def ship(app: App, as_json: bool) -> None:
    """Send the records the OTLP collector (audit.otlp in canal.yaml) has not had yet, now.

    Runs and approvals send theirs in the background; this retries after the collector was down.

    Example: canal audit ship
    """
    services = app.canal.services
    settings = services.config.audit.otlp
    if settings is None:
        msg = "no OTLP collector is configured (audit.otlp in canal.yaml)"
        raise ConfigError(msg, hint="add audit: {otlp: {endpoint: http://HOST:4318}} to canal.yaml, then: "
                          "canal config approve")
    done = shipper_for(services.audit.path, settings, services.project_id).ship()
    emit(as_json, {"status": "ok", "sent": done.sent, "through": done.through, "url": done.url},
         f"sent {done.sent} records to {done.url}; the collector has every record to a-{done.through:06d}")


def _seq_of(record_id: str | None) -> int:
    if record_id is None:
        return 0
    found = re.fullmatch(r"a-(\d+)", record_id.strip())
    if found is None:
        msg = f"--after {record_id!r} is not a record id like a-000042"
        raise ConfigError(msg, hint="canal audit show   (the first column is the record id)")
    return int(found.group(1))


def _raise_if_copy_differs(copy: ExportReport) -> None:
    if copy.problem is None:
        return
    p = copy.problem
    msg = f"audit export {copy.path}, line {p.line}: {p.kind}: {p.message}"
    raise AUDIT_TAMPERED(msg, hint=f"keep {copy.path} and the log as evidence; compare them with: "
                             "canal audit show --json", details=copy.to_json())


def _raise_if_tampered(report: VerifyReport) -> None:
    if report.problem is None:
        return
    p = report.problem
    msg = f"audit log {report.path}, line {p.line}: {p.kind}: {p.message}"
    error = AUDIT_LOG_FOREIGN if p.kind in ("foreign", "unbound") else AUDIT_TAMPERED
    raise error(msg, hint=f"inspect it with: canal audit show --json; keep a copy of "
                f"{report.path} as evidence before anything else", details=report.to_json())


def _raise_if_missing(report: VerifyReport, project: Services) -> None:
    """No record at all, yet the project has state only runs leave: the log was emptied or deleted."""
    if report.records > 0 or not project.has_history():
        return
    what = "empty" if Path(report.path).exists() else "missing"
    msg = (f"audit log {report.path} is {what}, but the project has state that its runs recorded "
           f"({project.state_dir}): the log was emptied or deleted")
    raise AUDIT_LOG_MISSING(msg, hint=f"restore {report.path} from a backup, or compare with an "
                               "off-host checkpoint: canal audit verify --checkpoint FILE",
                               details=report.to_json())


def register(cli: click.Group) -> None:
    cli.add_command(audit)
