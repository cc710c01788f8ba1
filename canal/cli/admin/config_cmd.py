"""``canal config``: whether canal.yaml's settings are approved, and a person approving them.

``approve`` needs an approver (docs/approvals.md): it is not an MCP tool, and nothing inside a sandbox
can reach it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from canal.cli.door_client import confirm_at_terminal, knock
from canal.cli.shared import (
    App,
    current_user,
    describe_trust,
    echo_json,
    json_option,
    pass_app,
    terminal_flags,
)
from canal.runtime.admin.person import Proof, sign

SIGNED_FOR_S = 600


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
    status = app.canal.settings.status()
    if as_json:
        echo_json({"status": "ok", **status.to_json()})
    else:
        click.echo(describe_trust(status))


@config_group.command("approve")
@click.option("--for", "for_user", metavar="USER", help="The OS user the agent's Canal runs as: approve as "
              "yourself through its server (your uid is the proof).")
@click.option("--ssh-key", type=click.Path(dir_okay=False, path_type=Path),
              help="Sign the approval with this SSH private key (ssh-keygen -Y sign).")
@click.option("--digest", help="Approve only if the content digest is this one (as shown by status).")
@click.option("--yes", is_flag=True, help="Do not ask (at the terminal, or for an answer piped to stdin); "
              "without it and with neither, the command stops and says so.")
@pass_app
def approve_config(app: App, for_user: str | None, ssh_key: Path | None, digest: str | None,
                   yes: bool) -> None:
    """As an approver: approve canal.yaml and its policy files exactly as they are (an audit record).

    The approvers of the settings approved last decide (another OS user, an SSH key); while none are named,
    a person at a terminal approves the first settings.

    Example: canal config approve --ssh-key ~/.ssh/id_ed25519
    """
    expires = int(time.time()) + SIGNED_FOR_S
    if for_user is not None:
        project = str((app.start or Path.cwd()).absolute())
        shown = knock(for_user, {"op": "config-show", "project": project, "expires": expires})
        want = digest or shown["status"]["digest"]
        click.echo(f"settings of {project}: {shown['status']['state']}, digest {want}", err=True)
        confirm_at_terminal("Approve these settings?", yes)
        sig = sign(str(shown["message"]).encode(), ssh_key) if ssh_key is not None else None
        done = knock(for_user, {"op": "config-approve", "project": project, "digest": want,
                                "expires": expires, **({"signature": sig} if sig else {})})["approved"]
        click.echo(f"approved {done['digest']} as {done['approved_by']} ({done['how']})")
        return
    settings = app.canal.settings
    status = settings.status()
    shown_digest = digest or status.snapshot.digest
    if all(terminal_flags()):  # for the person's own sake: the proof is the uid or the key
        click.echo(describe_trust(status), err=True)
    confirm_at_terminal("Approve these settings?", yes)
    sig = sign(settings.message(shown_digest, expires), ssh_key) if ssh_key is not None else None
    at_terminal = all(terminal_flags())
    # without a signature this process's uid is the proof once approvers are named: the agent's own
    proof = Proof(signature=sig) if sig else Proof(peer_uid=os.getuid()) if settings.approvers().approvers \
        else Proof()
    record = settings.approve(shown_digest, proof, agent_uid=os.geteuid(), expires=expires,
                              terminal_user=current_user() if at_terminal else None)
    click.echo(f"approved {record.digest} as {record.approved_by} ({record.how}); it applies from the next "
               "command (restart a running `canal mcp` to pick it up)")


def register(cli: click.Group) -> None:
    cli.add_command(config_group)
