"""``canal config``: whether canal.yaml's settings are approved, and a person approving them.

``approve`` needs a person (a terminal, or a registered approver key): it is not an MCP tool, and
nothing inside a sandbox can reach it.
"""

from __future__ import annotations

from pathlib import Path

import click

from canal.core.next import act
from canal.runtime.approvals import ApproverUnverifiedError
from canal.runtime.cli.shared import App, describe_trust, echo_json, json_option, pass_app


@click.group("config")
def config_group() -> None:
    """Trusted settings: canal.yaml takes effect once a person approved its exact content."""


@config_group.command("status")
@json_option("Print the status as JSON.")
@pass_app
def status_cmd(app: App, as_json: bool) -> None:
    """Show whether canal.yaml (and its policy files) is approved, and what changed since.

    Example: canal config status
    """
    status = app.canal.services.trust.status()
    if as_json:
        echo_json({"status": "ok", **status.to_json()})
    else:
        click.echo(describe_trust(status))


@config_group.command("approve")
@click.option("--approver-key", type=click.Path(dir_okay=False, path_type=Path), envvar="CANAL_APPROVER_KEY",
              help="A registered approver key file, to approve without a terminal.")
@click.option("--digest", help="Approve only if the content digest is this one (as shown by status).")
@click.option("--yes", is_flag=True, help="Do not ask again at the terminal.")
@pass_app
def approve_config(app: App, approver_key: Path | None, digest: str | None, yes: bool) -> None:
    """As a person: approve canal.yaml and its policy files exactly as they are (an audit record).

    Example: canal config approve
    """
    approver = app.person(approver_key)
    trust = app.canal.services.trust
    status = trust.status()
    shown = digest or status.snapshot.digest
    if approver.how == "tty" and not yes:
        click.echo(describe_trust(status))
        if not click.confirm("Approve these settings?", default=False):
            msg = "the settings were not approved"
            raise ApproverUnverifiedError(msg, next=act("config.approve"))
    record = trust.approve(approver, shown)
    click.echo(f"approved {record.digest} as {record.approved_by} ({record.how}); it applies from the next "
               "command (restart a running `canal mcp` to pick it up)")


def register(cli: click.Group) -> None:
    cli.add_command(config_group)
