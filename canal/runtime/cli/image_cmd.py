"""``canal image``: build and inspect sandbox images."""

from __future__ import annotations

import click

from canal.runtime.cli.shared import App, BuildProgress, echo_json, json_option, pass_app, stderr_is_tty


@click.group("image")
def image_group() -> None:
    """Build and inspect sandbox images."""


@image_group.command("build")
@click.option("--force", is_flag=True, help="Rebuild even when the cached image matches the Dockerfile.")
@click.option("--egress", is_flag=True,
              help="Also build the egress proxy's image (squid and dnsmasq), for network: allowlist.")
@click.option("--verbose", "-v", is_flag=True, help="Show every line of the build log.")
@json_option()
@pass_app
def build(app: App, force: bool, egress: bool, verbose: bool, as_json: bool) -> None:
    """Build the default sandbox image (bootstraps a Debian base when no registry answers).

    Example: canal image build --egress
    """
    progress = BuildProgress(verbose or stderr_is_tty())
    built = app.canal.build_images(egress=egress, force=force, on_event=progress)
    if as_json:
        rows = [{"image": b.tag, "id": b.image_id, "cached": b.cached, "base": b.base} for b in built]
        echo_json({"status": "ok", **rows[0], "images": rows})
    else:
        for b in built:
            click.echo(f"{b.tag} {'(cached)' if b.cached else 'built'} {b.image_id[:19]}")


def register(cli: click.Group) -> None:
    cli.add_command(image_group)

