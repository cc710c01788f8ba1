"""``canal init``: make the working directory (or ``-C DIR``) a project with a commented canal.yaml."""

from __future__ import annotations

import click

from canal.runtime.cli.shared import App, echo_json, json_option, pass_app, terminal_flags
from canal.runtime.project import locate_project, refuse_too_wide
from canal.runtime.scaffold import PROFILES, InitChoices, render_config, write_new_config


def _asks() -> bool:
    """A person at a terminal gets asked for what they did not pass as options."""
    return all(terminal_flags())


def _ask_profile() -> str:
    click.echo("Policy profile (docs/policy.md):")
    for name, note in PROFILES.items():
        click.echo(f"  {name:<9} {note}")
    return str(click.prompt("Profile", type=click.Choice(list(PROFILES)), default="standard"))


@click.command("init")
@click.option("--profile", type=click.Choice(list(PROFILES)), help="The policy profile (asked at a terminal; "
              "default standard).")
@json_option("Print what was written as JSON.")
@pass_app
def init(app: App, profile: str | None, as_json: bool) -> None:
    """Make this folder a Canal project: write a commented canal.yaml (never over an existing one).

    Every command run in this folder or below it then uses this project (its sandbox, audit log and
    trash), like git and ruff find their root.

    Example: canal init --profile standard
    """
    folder = app.base.resolve()
    refuse_too_wide(folder, f"{folder} is your home folder or /")
    if profile is None:
        profile = _ask_profile() if _asks() and not as_json else "standard"
    choices = InitChoices(profile="strict" if profile == "strict" else "standard")
    path = write_new_config(folder, render_config(choices))
    location = locate_project(folder)
    if as_json:
        echo_json({"status": "ok", "file": str(path), "profile": choices.profile,
                   "project": location.to_json()})
        return
    click.echo(f"wrote {path} (policy profile {choices.profile})")
    click.echo(f"project {location.root}: commands run here or below use it")
    click.echo("Next: canal doctor   (then canal run -- ls)")


def register(cli: click.Group) -> None:
    cli.add_command(init)
