"""``canal up``, ``canal down``, ``canal ps``, ``canal gc``: the project's sandboxes."""

from __future__ import annotations

import click

from canal.cli.shared import App, echo_json, json_option, pass_app
from canal.runtime.sandboxes.start import DEFAULT_SANDBOX


@click.command("up")
@click.argument("name", default=DEFAULT_SANDBOX)
@json_option("Print the sandbox as JSON.")
@pass_app
def up(app: App, name: str, as_json: bool) -> None:
    """Start the project's sandbox NAME (default: default) and warm its session.

    Example: canal up
    """
    info = app.canal.up(name)
    if as_json:
        echo_json({"status": "ok", "name": name, "container": info.name, "id": info.id[:12]})
    else:
        click.echo(f"{name} is up ({info.name}, {info.id[:12]})")


@click.command("down")
@click.argument("name", default=DEFAULT_SANDBOX)
@json_option("Print the outcome as JSON.")
@pass_app
def down(app: App, name: str, as_json: bool) -> None:
    """Remove the project's sandbox NAME and everything inside it (the workspace on the host stays).
    Its running background tasks are killed first, and listed.

    Example: canal down
    """
    report = app.canal.down_report(name)
    if as_json:
        echo_json({"status": "ok", "name": name, "removed": report.removed,
                   "tasks_ended": [t.summary() for t in report.tasks]})
        return
    for t in report.tasks:
        label = f"{t.id} ({t.name})" if t.name else t.id
        click.echo(f"ended task {label}: {t.command[:60]} (ran {t.duration_s or 0:.1f}s)")
    click.echo(f"{name} removed" if report.removed else f"{name} was not running (nothing to do)")


@click.command("ps")
@json_option("Print the sandboxes as JSON.")
@pass_app
def ps(app: App, as_json: bool) -> None:
    """List the project's sandboxes.

    Example: canal ps
    """
    rows = app.canal.ps()
    if as_json:
        echo_json({"status": "ok", "sandboxes": rows})
        return
    if not rows:
        click.echo("no sandboxes (start one with: canal up)")
        return
    for row in rows:
        click.echo(f"{row['name']:<16} {row['status']:<10} {row['id']}  {row['image']}  "
                   f"expires {row['expires_at'] or '-'}")


@click.command("gc")
@click.option("--all-projects", is_flag=True, help="Also reap other projects' expired sandboxes.")
@json_option("Print what was removed as JSON.")
@pass_app
def gc(app: App, all_projects: bool, as_json: bool) -> None:
    """Remove expired or orphaned Canal sandboxes, and Canal's images nothing can use (untagged, used by
    no container); never a container or an image Canal did not label as its own.

    Example: canal gc
    """
    removed = app.canal.gc(all_projects=all_projects)
    images = app.canal.gc_images()
    freed = sum(i.size for i in images)
    if as_json:
        echo_json({"status": "ok", "removed": removed, "freed_bytes": freed,
                   "images": [{"id": i.image_id, "size": i.size} for i in images]})
        return
    lines = [f"removed {n}" for n in removed]
    lines += [f"removed image {i.image_id.removeprefix('sha256:')[:12]} ({_size(i.size)})" for i in images]
    if images:
        lines.append(f"freed {_size(freed)} of unused Canal images")
    click.echo("\n".join(lines) or "nothing to remove")


def _size(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 1e6 else f"{n} bytes"


def register(cli: click.Group) -> None:
    for command in (up, down, ps, gc):
        cli.add_command(command)
