"""``canal image``: build and inspect sandbox images."""

from __future__ import annotations

import click

from canal.runtime.cli.render import echo_json, stderr_is_tty
from canal.sandbox.engine import docker_client
from canal.sandbox.image import DEFAULT_IMAGE, BuildEvent, build_default_image


class BuildProgress:
    """Renders build events on stderr: one line per Dockerfile step, log lines only when verbose."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose

    def __call__(self, event: BuildEvent) -> None:
        if event.kind == "step":
            text = event.text if len(event.text) <= 100 else event.text[:97] + "..."
            click.echo(f"[{event.step}/{event.steps}] {text}", err=True)
        elif event.kind == "info":
            click.echo(f"canal: {event.text}", err=True)
        elif self.verbose:
            click.echo(f"    {event.text}", err=True)


@click.group("image")
def image_group() -> None:
    """Build and inspect sandbox images."""


@image_group.command("build")
@click.option("--force", is_flag=True, help="Rebuild even when the cached image matches the Dockerfile.")
@click.option("--verbose", "-v", is_flag=True, help="Show every line of the build log.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def build(force: bool, verbose: bool, as_json: bool) -> None:
    """Build the default sandbox image (bootstraps a Debian base when no registry answers).

    Example: canal image build
    """
    client = docker_client()
    built = build_default_image(client, force=force, on_event=BuildProgress(verbose or stderr_is_tty()))
    if as_json:
        echo_json({"status": "ok", "image": built.tag, "id": built.image_id, "cached": built.cached,
                   "base": built.base})
    else:
        click.echo(f"{built.tag} {'(cached)' if built.cached else 'built'} {built.image_id[:19]}")


def register(cli: click.Group) -> None:
    cli.add_command(image_group)


__all__ = ["DEFAULT_IMAGE", "register"]
