"""``canal key show | rotate | retire``: key-encryption keys. Never prints key material."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from canal.cli.shared import App, echo_json, json_option, pass_app
from canal.host.keys import KEY_RETIRE_REFUSED
from canal.host.sealed import SealedError
from canal.runtime.services import sealed_store_for


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
    ks = app.canal.services.keys
    infos = ks.keys()
    if as_json:
        echo_json({"status": "ok", "source": ks.source, "keys": [asdict(i) for i in infos]})
        return
    where = "CANAL_KEY" if ks.source == "env" else str(ks.ring_path)
    click.echo(f"keys from {where}")
    for i in infos:
        click.echo(f"{i.id}  {i.state:<12} created {i.created or '-'}"
                   f"{'  retired ' + i.retired if i.retired else ''}")


@key.command("rotate")
@json_option("Print as JSON.")
@pass_app
def rotate(app: App, as_json: bool) -> None:
    """Make a new primary key and re-seal every state file under it; old keys stay decrypt-only.

    Example: canal key rotate
    """
    ks = app.canal.services.keys
    old = ks.primary_id
    new = ks.rotate()
    resealed, failed = 0, []
    for state_dir in app.canal.services.all_state_dirs():
        store = sealed_store_for(state_dir, ks)
        for doc_id in store.ids():
            try:
                store.reseal(doc_id)
                resealed += 1
            except SealedError as exc:
                failed.append({"doc_id": doc_id, "root": str(store.root), "code": exc.code,
                               "message": exc.message})
    result: dict[str, Any] = {"status": "ok" if not failed else "partial", "primary": new.id,
                              "previous": old, "resealed": resealed, "failed": failed}
    if as_json:
        echo_json(result)
    else:
        click.echo(f"new primary {new.id}; {old} is now decrypt-only; {resealed} file(s) re-sealed")
        for f in failed:
            click.echo(f"FAIL {f['doc_id']} ({f['code']}): {f['message']}")
        click.echo(f"Next: canal key retire {old}  (once every file is re-sealed)")


@key.command("retire")
@click.argument("key_id")
@json_option("Print as JSON.")
@pass_app
def retire(app: App, key_id: str, as_json: bool) -> None:
    """Destroy a decrypt-only key; refused while any state file is still sealed under it.

    Example: canal key retire k-1a2b3c4d5e
    """
    ks = app.canal.services.keys
    users = [f"{store.root}/{d}" for sd in app.canal.services.all_state_dirs()
             for store in [sealed_store_for(sd, ks)]
             for d in store.ids() if _key_of(store, d) in (key_id, None)]  # unreadable: assume in use
    if users:
        msg = f"{len(users)} state file(s) are still sealed under {key_id}: {', '.join(users[:5])}"
        raise KEY_RETIRE_REFUSED(msg, hint="canal key rotate (re-seals them), then retire again",
                                    details={"files": users})
    info = ks.retire(key_id)
    if as_json:
        echo_json({"status": "ok", "key": asdict(info)})
    else:
        click.echo(f"retired {info.id}; its material is destroyed")


def _key_of(store: Any, doc_id: str) -> str | None:
    try:
        return str(store.envelope(doc_id).key_id)
    except SealedError:
        return None


def register(cli: click.Group) -> None:
    cli.add_command(key)
