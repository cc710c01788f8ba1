"""``canal state show ID [--json] [--reveal]`` and ``canal state verify``: sealed state files."""

from __future__ import annotations

from typing import Any

import click

from canal.cli.shared import App, echo_json, json_option, pass_app
from canal.host.audit.log import AuditLog
from canal.host.sealed import SealedError, SealedStore
from canal.host.sealed.crypto import PREFIX

MASK = "[sealed]"  # how a sealed value shows; not the exact-secret mask (canal.core.mask)


def masked(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: masked(v) for k, v in node.items()}
    if isinstance(node, list):
        return [masked(v) for v in node]
    if isinstance(node, str) and node.startswith(PREFIX):
        return MASK
    return node


@click.group("state")
def state() -> None:
    """Sealed state files: show one, verify all."""


@state.command("show")
@click.argument("doc_id")
@json_option("Print as JSON.")
@click.option("--reveal", is_flag=True, help="Decrypt sealed values (recorded in the audit log).")
@pass_app
def show(app: App, doc_id: str, as_json: bool, reveal: bool) -> None:
    """Print a state document's readable structure; sealed values show as [sealed].

    Example: canal state show run-7f3a --json
    """
    store = app.canal.services.sealed
    doc, revision = store.load(doc_id)  # verifies before anything is shown
    env = store.envelope(doc_id)
    if reveal and isinstance(store.ledger, AuditLog):
        store.ledger.append("state.reveal", {"doc": doc_id, "revision": revision}, actor="user")
    body = {"doc_id": doc_id, "revision": revision, "key_id": env.key_id, "written_at": env.written_at,
            "sealed": env.sealed, "doc": doc if reveal else masked(env.doc)}
    if as_json:
        echo_json({"status": "ok", **body})
        return
    click.echo(f"{doc_id}  revision {revision}  key {env.key_id}  written {env.written_at}")
    click.echo(f"sealed: {', '.join(env.sealed) or 'none'}{'  (revealed)' if reveal else ''}")
    echo_json(body["doc"])


@state.command("verify")
@json_option("Print the results as JSON.")
@pass_app
def verify(app: App, as_json: bool) -> None:
    """Check every state file of this project: keys, ciphertexts, integrity, revisions.

    Example: canal state verify
    """
    store = app.canal.services.sealed
    known = store.ledger.known_documents() if isinstance(store.ledger, AuditLog) else []
    # a document the ledger recorded but whose file is gone fails too (SEALED_DELETED)
    results = [_verify_one(store, doc_id) for doc_id in sorted({*store.ids(), *known})]
    failed = [r for r in results if r["status"] != "ok"]
    if as_json:
        echo_json({"status": "failed" if failed else "ok", "root": str(store.root), "documents": results})
    else:
        for r in results:
            click.echo(f"{'ok  ' if r['status'] == 'ok' else 'FAIL'} {r['doc_id']:<32} "
                       f"{r.get('revision', r.get('code', ''))}")
            if r["status"] != "ok":
                click.echo(f"     {r['message']}\n     next: {r['hint']}")
        click.echo(f"{len(results) - len(failed)} ok, {len(failed)} failed ({store.root})")
    if failed:
        raise SystemExit(1)


def _verify_one(store: SealedStore, doc_id: str) -> dict[str, Any]:
    try:
        _, revision = store.load(doc_id)
    except SealedError as exc:
        return {"doc_id": doc_id, "status": "failed", "code": exc.code, "message": exc.message,
                "hint": exc.hint}
    return {"doc_id": doc_id, "status": "ok", "revision": revision}


def register(cli: click.Group) -> None:
    cli.add_command(state)
