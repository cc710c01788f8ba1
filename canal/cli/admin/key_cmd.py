"""``canal key show | rotate | retire``: key-encryption keys. Never prints key material."""

from __future__ import annotations

from dataclasses import asdict

import click

from canal.cli.shared import App, echo_json, json_option, pass_app


@click.group("key")
def key() -> None:
    """Keys that seal state: show ids and states, rotate, retire."""


@key.command("show")
@json_option("Print as JSON.")
@pass_app
def show(app: App, as_json: bool) -> None:
    """List key ids and states (primary, decrypt-only, retired); never the material.

    Example: canal key show
    """
    found = app.canal.keys.list()
    if as_json:
        echo_json({"status": "ok", "source": found.source, "keys": [asdict(i) for i in found.keys]})
        return
    where = "CANAL_KEY" if found.source == "env" else found.ring_path
    click.echo(f"keys from {where}")
    for i in found.keys:
        click.echo(f"{i.id}  {i.state:<12} created {i.created or '-'}"
                   f"{'  retired ' + i.retired if i.retired else ''}")


@key.command("rotate")
@json_option("Print as JSON.")
@pass_app
def rotate(app: App, as_json: bool) -> None:
    """Make a new primary key and re-seal every state file under it; old keys stay decrypt-only.

    Example: canal key rotate
    """
    done = app.canal.keys.rotate()
    if as_json:
        echo_json(done.to_json())
    else:
        click.echo(f"new primary {done.primary}; {done.previous} is now decrypt-only; "
                   f"{done.resealed} file(s) re-sealed")
        for f in done.failed:
            click.echo(f"FAIL {f.doc_id} ({f.code}): {f.message}")
        click.echo(f"Next: canal key retire {done.previous}  (once every file is re-sealed)")


@key.command("retire")
@click.argument("key_id")
@json_option("Print as JSON.")
@pass_app
def retire(app: App, key_id: str, as_json: bool) -> None:
    """Destroy a decrypt-only key; refused while any state file is still sealed under it.

    Example: canal key retire k-1a2b3c4d5e
    """
    info = app.canal.keys.retire(key_id)  # refused while a state file is still sealed under it
    if as_json:
        echo_json({"status": "ok", "key": asdict(info)})
    else:
        click.echo(f"retired {info.id}; its material is destroyed")


def register(cli: click.Group) -> None:
    cli.add_command(key)
