"""``canal approve TOKEN`` and ``canal approvals``: an approver decides a pending confirmation.

A terminal never counts. The approver proves who they are:

- as their own OS user: ``canal -C PROJECT approve TOKEN --for AGENT_USER`` reaches the agent's server on
  its approval door, and the server reads the client's uid from the kernel (the agent's uid is refused);
- with an SSH key: ``--ssh-key KEY`` signs the approval here (``ssh-keygen -Y sign``), or
  ``--signature FILE`` carries a signature made elsewhere over the text ``--print-message`` shows.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import click

from canal.cli.door_client import confirm_at_terminal, knock, read_signature
from canal.cli.shared import App, echo_json, json_option, pass_app
from canal.core.display import visible
from canal.runtime.admin.person import Decision, Pending, Proof


def describe(p: dict[str, Any]) -> str:
    rules = ", ".join(p.get("rule_ids") or []) or "-"
    left = max(0, int(float(p.get("expires_at") or 0) - time.time()))
    shown = {k: visible(str(p.get(k))) for k in ("command", "sandbox", "cwd", "reason")}
    return (f"  $ {shown['command']}\n  sandbox {shown['sandbox']}, cwd {shown['cwd']}\n"
            f"  rule {visible(rules)}: {shown['reason']}\n  expires in {left // 60}m{left % 60:02d}s")


@click.command("approve")
@click.argument("token")
@click.option("--for", "for_user", metavar="USER", help="The OS user the agent's Canal runs as: approve as "
              "yourself through its server (your uid is the proof).")
@click.option("--ssh-key", type=click.Path(dir_okay=False, path_type=Path),
              help="Sign the approval with this SSH private key (ssh-keygen -Y sign).")
@click.option("--signature", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An SSH signature made elsewhere over the text --print-message shows.")
@click.option("--deny", is_flag=True, help="Refuse the command instead; the agent reads --reason.")
@click.option("--reason", default="", help="Why (shown to the agent when it re-runs the command).")
@click.option("--print-message", is_flag=True, help="Print the exact text to sign, and nothing else.")
@click.option("--yes", is_flag=True, help="Do not ask (at the terminal, or for an answer piped to stdin); "
              "without it and with neither, the command stops and says so.")
@json_option("Print the decided token as JSON.")
@pass_app
def approve(app: App, token: str, for_user: str | None, ssh_key: Path | None, signature: Path | None,
            deny: bool, reason: str, print_message: bool, yes: bool, as_json: bool) -> None:
    """Approve (or --deny) a pending confirmation, as an approver named in canal.yaml.

    Example: canal -C /srv/project approve c_k3j9x2mqa7fe --for agent
    """
    decision: Decision = "deny" if deny else "approve"
    if for_user is not None:
        done = _through_door(app, token, for_user, decision, reason, ssh_key, signature, print_message, yes)
    else:
        done = _here(app, token, decision, reason, ssh_key, signature, print_message, yes)
    if done is None:
        return
    if as_json:
        echo_json({"status": done["status"], **done})
        return
    verb = "denied" if done["status"] == "denied" else "approved"
    then = (f"it can run once, with: canal run --confirm {done['token']} -- {visible(done['command'])}"
            if verb == "approved" else f"the agent reads: {visible(str(done.get('denied_reason')))}")
    click.echo(f"{verb} {done['token']} as {visible(done['approved_by'])}; {then}")


def _through_door(app: App, token: str, user: str, decision: Decision, reason: str, ssh_key: Path | None,
                  signature: Path | None, print_message: bool, yes: bool) -> dict[str, Any] | None:
    project = str((app.start or Path.cwd()).absolute())
    shown = knock(user, {"op": "show", "project": project, "token": token})
    message = str(shown["messages"][decision]).encode()
    if print_message:
        click.echo(message.decode(), nl=False)
        return None
    click.echo(f"{decision.capitalize()} {token} of {user}'s agent for:\n{describe(shown['pending'])}",
               err=True)
    confirm_at_terminal(f"{decision.capitalize()}?", yes)
    sig = read_signature(ssh_key, signature, message)
    answer = knock(user, {"op": "decide", "project": project, "token": token, "decision": decision,
                          "reason": reason, **({"signature": sig} if sig else {})})
    return dict(answer["pending"])


def _here(app: App, token: str, decision: Decision, reason: str, ssh_key: Path | None, signature: Path | None,
          print_message: bool, yes: bool) -> dict[str, Any] | None:
    approvals = app.canal.approvals
    if print_message:
        click.echo(approvals.message(token, decision).decode(), nl=False)
        return None
    pending: Pending = approvals.show(token)
    sig = None
    if ssh_key is not None or signature is not None:
        click.echo(f"{decision.capitalize()} {pending.token} for:\n{describe(pending.to_json())}", err=True)
        confirm_at_terminal(f"{decision.capitalize()}?", yes)
        sig = read_signature(ssh_key, signature, approvals.message(token, decision))
    # without a signature, this process's own uid is the only proof: the agent's, which never counts
    proof = Proof(peer_uid=None if sig else os.getuid(), signature=sig)
    return approvals.decide(token, decision, reason, proof, agent_uid=os.geteuid()).to_json()


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
    pending = app.canal.approvals.pending()
    if as_json:
        echo_json({"status": "ok", "pending": [p.to_json() for p in pending]})
        return
    if not pending:
        click.echo("no pending confirmations", err=True)
    for p in pending:
        left = max(0, int(p.expires_at - time.time()))
        who = p.approved_by or ("needs a person" if p.needs_human else "agent may use")
        click.echo(f"{p.token}  {int(p.age_s)}s old, expires in {left}s  [{','.join(p.rule_ids)}] "
                   f"({visible(who)})  $ {visible(p.command)}")


def register(cli: click.Group) -> None:
    cli.add_command(approve)
    cli.add_command(approvals)
