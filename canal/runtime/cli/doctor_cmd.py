"""``canal doctor``: is this machine ready to run sandboxes?"""

from __future__ import annotations

import click

from canal.runtime.cli.render import echo_json
from canal.runtime.doctor import run_checks
from canal.runtime.project import find_project_dir


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(as_json: bool) -> None:
    """Check the engine, the default image and the host state folder; print a fix for each failure.

    Example: canal doctor
    """
    checks = run_checks(find_project_dir())
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
