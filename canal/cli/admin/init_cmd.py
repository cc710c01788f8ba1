"""``canal init``: make the working directory (or ``-C DIR``) a project with a commented canal.yaml."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from canal.cli.shared import (
    APPROVE_COMMAND,
    App,
    current_user,
    describe_trust,
    echo_json,
    json_option,
    pass_app,
    terminal_flags,
)
from canal.runtime.admin.person import Proof
from canal.runtime.settings.project import locate_project, refuse_too_wide
from canal.runtime.settings.scaffold import (
    PRESET_NOTES,
    PROFILES,
    InitChoices,
    detect_preset,
    render_config,
    write_new_config,
)

if TYPE_CHECKING:
    from canal.runtime.trust import TrustStatus

NO_PRESET = "none"


def _asks() -> bool:
    """A person at a terminal gets asked for what they did not pass as options."""
    return all(terminal_flags())


def _ask(title: str, notes: dict[str, str], default: str) -> str:
    click.echo(title)
    for name, note in notes.items():
        click.echo(f"  {name:<9} {note}")
    return str(click.prompt(title.split(" (")[0], type=click.Choice(list(notes)), default=default))


@click.command("init")
@click.option("--profile", type=click.Choice(list(PROFILES)), help="The policy profile (asked at a terminal; "
              "default standard).")
@click.option("--preset", type=click.Choice([*PRESET_NOTES]), help="The image preset (asked at a terminal; "
              "default: python with a pyproject.toml, setup.py or requirements.txt, node with a "
              "package.json, else none).")
@json_option("Print what was written as JSON.")
@pass_app
def init(app: App, profile: str | None, preset: str | None, as_json: bool) -> None:
    """Make this folder a Canal project: write a commented canal.yaml (never over an existing one).

    Every command run in this folder or below it then uses this project (its sandbox, audit log and
    trash), like git and ruff find their root. An image preset needs a person's approval before the
    first command: at a terminal, canal init offers it.

    Example: canal init --profile standard --preset python
    """
    folder = app.base.resolve()
    refuse_too_wide(folder, f"{folder} is your home folder or /")
    asks = _asks() and not as_json
    suggested = detect_preset(folder) or NO_PRESET
    if profile is None:
        profile = _ask("Policy profile (docs/policy.md):", PROFILES, "standard") if asks else "standard"
    if preset is None:
        preset = _ask("Image preset (docs/images.md):", PRESET_NOTES, suggested) if asks else suggested
    choices = InitChoices(profile="strict" if profile == "strict" else "standard",
                          preset=None if preset == NO_PRESET else "node" if preset == "node" else "python")
    path = write_new_config(folder, render_config(choices))
    location = locate_project(folder)
    status = app.canal.settings.status()
    if as_json:
        echo_json({"status": "ok", "file": str(path), "profile": choices.profile, "preset": choices.preset,
                   "project": location.to_json(), "config": status.state})
        return
    click.echo(f"wrote {path} (policy profile {choices.profile}, image preset {preset})")
    click.echo(f"project {location.root}: commands run here or below use it")
    if status.state != "unapproved":
        click.echo("Next: canal doctor   (then canal run -- ls)")
    elif asks:
        _offer_approval(app, status)
    else:
        click.echo(f"Next: a person approves the image settings at a terminal: {APPROVE_COMMAND}")


def _offer_approval(app: App, status: TrustStatus) -> None:
    click.echo(describe_trust(status))
    if click.confirm("Approve these settings now?", default=False):
        settings = app.canal.settings
        # as `canal config approve`: once approvers are named, this uid is the proof (never the agent's)
        proof = Proof(peer_uid=os.getuid()) if settings.approvers().approvers else Proof()
        record = settings.approve(status.snapshot.digest, proof, agent_uid=os.geteuid(),
                                  terminal_user=current_user() if all(terminal_flags()) else None)
        click.echo(f"approved {record.digest} as {record.approved_by}")
        click.echo("Next: canal doctor   (the first command builds the project image)")
    else:
        click.echo(f"Next: review canal.yaml, then approve it: {APPROVE_COMMAND}")


def register(cli: click.Group) -> None:
    cli.add_command(init)
