"""``canal audit show|verify|checkpoint|export``: read, verify, anchor and copy off the audit log."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from canal.cli.shared import App, echo_json, emit, json_option, pass_app, since_threshold
from canal.core.display import visible
from canal.core.duration import EXAMPLES
from canal.core.fsutil import atomic_write

DANGLING_MARK = "[no outcome: the process running it stopped; the next command records it as interrupted]"


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
    threshold = since_threshold(since, datetime.now(UTC)) if since else ""
    found = app.canal.audit.show(since=threshold, event=event_prefix or "")
    for bad in found.unreadable:
        click.echo(f"line {bad.line}: not a record ({bad.message}); run: canal audit verify", err=True)
    if as_json:
        echo_json({"status": "ok", "path": found.path, "records": [r.to_json() for r in found.records],
                   "dangling": found.dangling})
        return
    dangling = set(found.dangling)
    for rec in found.records:
        mark = f"  {DANGLING_MARK}" if rec.id in dangling else ""
        click.echo(visible(f"{rec.id} {rec.ts[:19]}Z {rec.event:<16} {rec.actor:<8} {rec.summary}{mark}"))
    if not found.records:
        click.echo(f"no records in {found.path}", err=True)


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
    audit = app.canal.audit
    report = audit.verify(checkpoint=checkpoint_file.read_text() if checkpoint_file is not None else None)
    if export_file is not None:
        copy = audit.verify_copy(export_file)
        emit(as_json, {**report.to_json(), "export": copy.to_json()},
             f"ok: the {copy.records} records of {export_file} (a-{copy.first:06d}..a-{copy.last:06d}) match "
             f"the log {report.path} ({report.records} records intact)")
        return
    if as_json:
        echo_json(report.to_json())
        return
    head = report.checkpoint
    against = f", matches the checkpoint at record {head.seq}" if head else ""
    click.echo(f"ok: {report.records} records intact in {report.path}{against}; "
               f"head a-{report.head.seq:06d} {report.head.hash[:16]}")


@audit.command("checkpoint")
@json_option("Print the checkpoint inside a JSON envelope.")
@pass_app
def checkpoint(app: App, as_json: bool) -> None:
    """Verify the log, then print a signed head (one JSON line) to store somewhere the agent cannot write.

    Example: canal audit checkpoint > ~/canal-checkpoint.json
    """
    cp = app.canal.audit.checkpoint()
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
    threshold = since_threshold(since, datetime.now(UTC)) if since else ""
    copied = app.canal.audit.export(since=threshold, after=after_id)
    lines = copied.lines
    if output is None:
        sys.stdout.buffer.writelines(lines)
        sys.stdout.flush()
    else:
        atomic_write(output, b"".join(lines), private_folder=False)
    ids = copied.span()
    span = f" ({ids[0]}..{ids[1]}, {fmt})" if ids else ""
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
    done = app.canal.audit.ship()
    emit(as_json, {"status": "ok", "sent": done.sent, "through": done.through, "url": done.url},
         f"sent {done.sent} records to {done.url}; the collector has every record to a-{done.through:06d}")


def register(cli: click.Group) -> None:
    cli.add_command(audit)
