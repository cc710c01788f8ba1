"""``canal doctor``: is this machine ready to run sandboxes?"""

from __future__ import annotations

import click

from canal.runtime.cli.shared import App, echo_json, json_option, pass_app
from canal.runtime.doctor import run_checks


@click.command("doctor")
@json_option("Print the checks as JSON.")
@pass_app
def doctor(app: App, as_json: bool) -> None:
    """Check the engine, the default image and the host state folder; print a fix for each failure.

    Example: canal doctor
    """
    checks = run_checks(app.project_dir)
    healthy = all(c.ok for c in checks)
    if as_json:
        echo_json({"status": "ok" if healthy else "failed", "checks": [c.to_json() for c in checks]})
    else:
        for c in checks:
            click.echo(f"{'ok  ' if c.ok else 'FAIL'} {c.name:<10} {c.detail}")
            if not c.ok:
                click.echo(f"     fix: {c.fix}")
    if not healthy:
        raise SystemExit(1)


def register(cli: click.Group) -> None:
    cli.add_command(doctor)
