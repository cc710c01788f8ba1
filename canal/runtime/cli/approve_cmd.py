"""``canal approve TOKEN`` and ``canal approvals``: a person approves a pending confirmation."""

from __future__ import annotations

import getpass
import os
import sys
import time
from pathlib import Path

import click

from canal.runtime.approvals import (
    ApprovalService,
    Approver,
    ApproverRegistry,
    ApproverUnverifiedError,
    Pending,
    from_terminal,
    identify_person,
)
from canal.runtime.cli.audit_cmd import services
from canal.runtime.cli.render import echo_json
from canal.runtime.paths import config_dir
from canal.runtime.services import APPROVERS_PURPOSE


def open_service() -> ApprovalService:
    """The project's approvals, in the mode canal.yaml sets (policy.approval)."""
    return services().approvals


def open_registry() -> ApproverRegistry:
    key = services().keys.derive(APPROVERS_PURPOSE)
    return ApproverRegistry(config_dir() / "approvers.json", key)


def current_user() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid:{os.getuid()}"
    sudo = os.environ.get("SUDO_USER")
    return f"{sudo} (via sudo as {user})" if sudo and sudo != user else user


def terminal_flags() -> tuple[bool, bool]:
    return sys.stdin.isatty(), sys.stdout.isatty()


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
@click.option("--json", "as_json", is_flag=True, help="Print the approved token as JSON.")
def approve(token: str, approver_key: Path | None, yes: bool, as_json: bool) -> None:
    """Approve a pending confirmation, as a person (from a terminal, or with an approver key).

    Example: canal approve c_k3j9x2mqa7fe
    """
    user = current_user()
    approver: Approver = identify_person(approver_key, user, terminal=terminal_flags(),
                                         registry=open_registry)
    service = open_service()
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
@click.option("--json", "as_json", is_flag=True, help="Print the pending confirmations as JSON.")
@click.pass_context
def approvals(ctx: click.Context, as_json: bool) -> None:
    """List confirmations waiting to be used or approved (redacted command, age, expiry, rule).

    Example: canal approvals
    """
    if ctx.invoked_subcommand is not None:
        return
    pending = open_service().pending()
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
def add_approver(name: str, key_out: Path) -> None:
    """Register a person who may approve without a terminal; writes their key (needs a terminal).

    Example: canal approvals add-approver alice --key-out ~/alice.canal-approver
    """
    user = from_terminal(*terminal_flags(), current_user()).user
    open_registry().add(name, key_out, added_by=user)
    click.echo(f"registered approver {name}; key written to {key_out} (0600). "
               f"They approve with: canal approve TOKEN --approver-key {key_out}")


def register(cli: click.Group) -> None:
    cli.add_command(approve)
    cli.add_command(approvals)
