"""``canal approve TOKEN`` and ``canal approvals``: a person approves a pending confirmation."""

from __future__ import annotations

import time
from pathlib import Path

import click

from canal.runtime.approvals import Approver, ApproverUnverifiedError, Pending
from canal.runtime.cli.shared import App, echo_json, json_option, pass_app


def _describe(p: Pending) -> str:
    rules = ", ".join(p.rule_ids) or "-"
    left = max(0, int(p.expires_at - time.time()))
    return (f"  $ {p.command}\n  sandbox {p.sandbox}, cwd {p.cwd}\n  rule {rules}: {p.reason}\n"
            f"  expires in {left // 60}m{left % 60:02d}s")


@click.command("approve")
@click.argument("token")
@click.option("--approver-key", type=click.Path(dir_okay=False, path_type=Path), envvar="CANAL_APPROVER_KEY",
              help="A registered approver key file, to approve without a terminal (env CANAL_APPROVER_KEY).")
@click.option("--yes", is_flag=True, help="Do not ask again at the terminal.")
@json_option("Print the approved token as JSON.")
@pass_app
def approve(app: App, token: str, approver_key: Path | None, yes: bool, as_json: bool) -> None:
    """Approve a pending confirmation, as a person (from a terminal, or with an approver key).

    Example: canal approve c_k3j9x2mqa7fe
    """
    approver: Approver = app.person(approver_key)
    service = app.canal.services.approvals
    pending = service.show(token)
    if approver.how == "tty" and not yes:
        click.echo(f"Approve {pending.token} for:\n{_describe(pending)}")
        if not click.confirm("Approve?", default=False):
            msg = f"{pending.token} was not approved"
            raise ApproverUnverifiedError(msg, hint=f"canal approve {pending.token}")
    approved = service.approve(token, approver)
    if as_json:
        echo_json({"status": "approved", **approved.to_json()})
        return
    click.echo(f"approved {approved.token} as {approved.approved_by}; it can run once, with: "
               f"canal run --confirm {approved.token} -- {approved.command}")


@click.group("approvals", invoke_without_command=True)
@json_option("Print the pending confirmations as JSON.")
@click.pass_context
@pass_app
def approvals(app: App, ctx: click.Context, as_json: bool) -> None:
    """List confirmations waiting to be used or approved (redacted command, age, expiry, rule).

    Example: canal approvals
    """
    if ctx.invoked_subcommand is not None:
        return
    pending = app.canal.services.approvals.pending()
    if as_json:
        echo_json({"status": "ok", "pending": [p.to_json() for p in pending]})
        return
    if not pending:
        click.echo("no pending confirmations", err=True)
    for p in pending:
        left = max(0, int(p.expires_at - time.time()))
        who = p.approved_by or ("needs a person" if p.needs_human else "agent may use")
        click.echo(f"{p.token}  {int(p.age_s)}s old, expires in {left}s  [{','.join(p.rule_ids)}] "
                   f"({who})  $ {p.command}")


@approvals.command("add-approver")
@click.argument("name")
@click.option("--key-out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the new approver key (must not exist). Give it to the person only.")
@pass_app
def add_approver(app: App, name: str, key_out: Path) -> None:
    """Register a person who may approve without a terminal; writes their key (needs a terminal).

    Example: canal approvals add-approver alice --key-out ~/alice.canal-approver
    """
    user = app.person_at_terminal().user
    app.canal.services.approvers.add(name, key_out, added_by=user)
    click.echo(f"registered approver {name}; key written to {key_out} (0600). "
               f"They approve with: canal approve TOKEN --approver-key {key_out}")


def register(cli: click.Group) -> None:
    cli.add_command(approve)
    cli.add_command(approvals)
