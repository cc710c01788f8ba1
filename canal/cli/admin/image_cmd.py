"""``canal image``: build the sandbox images, and show what the project's image has."""

from __future__ import annotations

import click

from canal.cli.shared import App, BuildProgress, echo_json, json_option, pass_app, stderr_is_tty
from canal.runtime.settings.project import ProjectNotFound
from canal.sandbox.images import BuiltImage


@click.group("image")
def image_group() -> None:
    """Build the sandbox images (the default one and the project's), and show what they have."""


@image_group.command("build")
@click.option("--force", is_flag=True, help="Rebuild the default image even when the cached one matches.")
@click.option("--egress", is_flag=True,
              help="Also build the egress proxy's image (squid and dnsmasq), for network: allowlist.")
@click.option("--verbose", "-v", is_flag=True, help="Show every line of the build log.")
@json_option()
@pass_app
def build(app: App, force: bool, egress: bool, verbose: bool, as_json: bool) -> None:
    """Build the default sandbox image (bootstraps a Debian base when no registry answers), then the
    project's image when canal.yaml has an image: section (cached by content).

    Example: canal image build --egress
    """
    progress = BuildProgress(verbose or stderr_is_tty())
    built = app.canal.build_images(egress=egress, force=force, on_event=progress)
    try:
        project = app.canal.build_project_image(on_event=progress)
    except ProjectNotFound:  # outside a project: Canal's own images only
        project = None
    if project is not None:
        built.append(project)
    if as_json:
        rows = [_row(b) for b in built]
        echo_json({"status": "ok", **rows[0], "images": rows})
        return
    for b in built:
        click.echo(f"{b.tag} {'(cached)' if b.cached else 'built'} {b.image_id[:19]}")


def _row(built: BuiltImage) -> dict[str, object]:
    return {"image": built.tag, "id": built.image_id, "cached": built.cached, "base": built.base}


@image_group.command("show")
@json_option()
@pass_app
def show(app: App, as_json: bool) -> None:
    """Show the image this project's sandboxes start from: its base, the base's Debian packages, what
    canal.yaml's image: section adds (preset, apt, pip, npm, files, mirrors), the CA certificates it
    trusts (sandbox.ca_certificates), and whether it is built.

    Example: canal image show
    """
    report = app.canal.image_report()
    if as_json:
        echo_json({"status": "ok", **report.to_json()})
        return
    state = f"built {report.image_id[:19]}" if report.image_id else "not built yet (canal image build)"
    lines = [f"image    {report.tag} ({state})", f"base     {report.base}"]
    if report.base_packages:
        lines.append(f"  Debian: {' '.join(report.base_packages)}")
    added = report.added or {}
    if added.get("preset"):
        lines.append(f"preset   {added['preset']}: {' '.join(added['preset_packages'])}")
    for kind in ("apt", "pip", "npm"):
        if added.get(kind):
            lines.append(f"{kind:<8} {' '.join(added[kind])}")
    for item in added.get("files") or []:
        lines.append(f"file     {item}")
    for item in added.get("ca_certificates") or []:  # what the sandboxes trust, beyond Debian's CAs
        lines.append(f"trusts   {item}")
    for name, label in (("index_url", "pip from"), ("npm_registry", "npm from")):
        if added.get(name):
            lines.append(f"{label} {added[name]}")
    click.echo("\n".join(lines))


def register(cli: click.Group) -> None:
    cli.add_command(image_group)
