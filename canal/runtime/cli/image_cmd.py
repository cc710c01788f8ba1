"""``canal image``: build and inspect sandbox images."""

from __future__ import annotations

import click

from canal.runtime.cli.shared import BuildProgress, echo_json, json_option, stderr_is_tty
from canal.sandbox.engine import docker_client
from canal.sandbox.image import build_default_image


@click.group("image")
def image_group() -> None:
    """Build and inspect sandbox images."""


@image_group.command("build")
@click.option("--force", is_flag=True, help="Rebuild even when the cached image matches the Dockerfile.")
@click.option("--verbose", "-v", is_flag=True, help="Show every line of the build log.")
@json_option()
def build(force: bool, verbose: bool, as_json: bool) -> None:
    """Build the default sandbox image (bootstraps a Debian base when no registry answers).

    Example: canal image build
    """
    client = docker_client()
    try:
        built = build_default_image(client, force=force, on_event=BuildProgress(verbose or stderr_is_tty()))
    finally:
        client.close()
    if as_json:
        echo_json({"status": "ok", "image": built.tag, "id": built.image_id, "cached": built.cached,
                   "base": built.base})
    else:
        click.echo(f"{built.tag} {'(cached)' if built.cached else 'built'} {built.image_id[:19]}")


def register(cli: click.Group) -> None:
    cli.add_command(image_group)

