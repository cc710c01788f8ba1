"""``canal egress log``: every attempt of the project's allowlist sandboxes to reach the network."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from canal.cli.shared import App, echo_json, json_option, pass_app, since_threshold
from canal.core.display import visible


@click.group("egress")
def egress() -> None:
    """The egress allowlist (sandbox.network: {mode: allowlist, allow: [...]}): what sandboxes tried."""


@egress.command("log")
@click.option("--denied", is_flag=True, help="Only attempts the proxy refused.")
@click.option("--since", help="Only attempts newer than this: 30m, 2h, 7d, or an ISO date/time (UTC).")
@click.option("--sandbox", help="Only attempts of this sandbox (default: every sandbox of the project).")
@click.option("--limit", type=click.IntRange(min=1), default=200, show_default=True,
              help="At most this many (the newest).")
@json_option("Print the attempts as JSON.")
@pass_app
def log(app: App, denied: bool, since: str | None, sandbox: str | None, limit: int, as_json: bool) -> None:
    """Show each HTTP request, CONNECT and DNS lookup an allowlist sandbox made: host, port, allowed or
    denied, bytes each way. Read from the audit log (the proxies' newest lines are recorded first).

    A connection to an IP address or over IPv6 never reaches the proxy (it fails inside the sandbox)
    and is not listed. Example: canal egress log --denied
    """
    threshold = since_threshold(since, datetime.now(UTC)) if since else ""
    found = app.canal.egress_log(since=threshold, denied_only=denied, sandbox=sandbox, limit=limit)
    if as_json:
        echo_json({"status": "ok", **found.model_dump(mode="json")})
        return
    if found.unread:
        click.echo(f"canal: the proxies' newest lines were not read ({visible(found.unread)})", err=True)
    if not found.records:
        click.echo(_nothing(found.allowlist, denied, since, sandbox))
        return
    for r in found.records:
        verdict = "allowed" if r.allowed else "DENIED "
        traffic = f"  {r.bytes_sent}B out {r.bytes_received}B in" if r.kind != "dns" else ""
        click.echo(f"{r.at[:19].replace('T', ' ')}  {verdict} {r.kind:<7} {r.method:<7} "
                   f"{r.destination}  [{r.sandbox or r.client}]{traffic}")
    if any(not r.allowed for r in found.records):
        click.echo("a denied host is allowed by adding it to sandbox.network.allow in canal.yaml; "
                   "a person then runs: canal config approve")


def _nothing(allowlist: bool, denied: bool, since: str | None, sandbox: str | None) -> str:
    """Why nothing is listed, true for this project: an allowlist project may simply have no denials."""
    if not allowlist:
        return ("no egress attempts recorded: this project's sandboxes have no allowlist (sandbox.network "
                "must be {mode: allowlist, ...}; see docs/egress.md)")
    what = "denied attempts" if denied else "egress attempts"
    scope = f" since {visible(since)}" if since else ""
    scope += f" by sandbox {visible(sandbox)}" if sandbox else ""
    return f"no {what} recorded{scope} (sandbox.network is an allowlist)"


def register(cli: click.Group) -> None:
    cli.add_command(egress)
