"""``canal doctor``: is this machine ready to run sandboxes, and which project is this?"""

from __future__ import annotations

import click

from canal.cli.shared import App, echo_json, json_option, pass_app
from canal.cli.words import say
from canal.core.next import say_all
from canal.runtime.admin.doctor import Check, run_checks
from canal.runtime.settings.project import ProjectLocation, ProjectNotFound


@click.command("doctor")
@json_option("Print the checks as JSON.")
@pass_app
def doctor(app: App, as_json: bool) -> None:
    """Say which project folder Canal uses, and check the engine, the image, canal.yaml and the host
    state folder; print a fix for each failure.

    Example: canal doctor
    """
    location: ProjectLocation | None = None
    try:
        location = app.location
        checks = run_checks(location.root)
    except ProjectNotFound as exc:
        checks = [*run_checks(None), Check("project", False, exc.message, exc.hint)]
    healthy = all(c.ok for c in checks)
    if as_json:
        echo_json({"status": "ok" if healthy else "failed",
                   "project": location.to_json() if location else None,
                   "checks": [c.to_json() for c in checks]})
    else:
        if location is not None:
            click.echo(f"project    {location.root} ({location.how})")
        for c in checks:
            click.echo(f"{'ok  ' if c.ok else 'FAIL'} {c.name:<10} {c.detail}")
            if not c.ok:
                click.echo(f"     fix: {say_all(c.next, say, lead=c.fix)}")
    if not healthy:
        raise SystemExit(1)


def register(cli: click.Group) -> None:
    cli.add_command(doctor)
