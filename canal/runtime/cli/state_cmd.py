"""``canal state show ID [--json] [--reveal]`` and ``canal state verify``: sealed state files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from canal.runtime.audit.log import AuditLog, audit_path
from canal.runtime.cli.render import echo_json
from canal.runtime.keys import KeyStore
from canal.runtime.paths import data_root, project_key, state_dir_for
from canal.runtime.project import find_project_dir
from canal.runtime.sealed import SealedError, SealedStore
from canal.runtime.sealed.crypto import PREFIX
from canal.runtime.services import AUDIT_PURPOSE

MASK = "[sealed]"


def store_for(state_dir: Path, keys: KeyStore | None = None, project_id: str | None = None) -> SealedStore:
    """The sealed store of one project's state folder, with its audit log as the revision ledger.
    Under the data folder the state folder's name is the project id."""
    keys = keys or KeyStore()
    if project_id is None and state_dir.parent == data_root() / "projects":
        project_id = state_dir.name
    ledger = AuditLog(audit_path(state_dir), keys.derive(AUDIT_PURPOSE), keys.primary_id,
                      earlier_keys=keys.derive_all(AUDIT_PURPOSE), project_id=project_id)
    return SealedStore(state_dir / "state", keys, ledger)


def project_store(keys: KeyStore | None = None) -> SealedStore:
    project = find_project_dir()
    return store_for(state_dir_for(project), keys, project_key(project))


def all_state_dirs() -> list[Path]:
    """This project's state folder and every other project's under the data folder."""
    found = {state_dir_for(find_project_dir())}
    projects = data_root() / "projects"
    if projects.is_dir():
        found.update(p for p in projects.iterdir() if (p / "state").is_dir())
    return sorted(found)


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
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--reveal", is_flag=True, help="Decrypt sealed values (recorded in the audit log).")
def show(doc_id: str, as_json: bool, reveal: bool) -> None:
    """Print a state document's readable structure; sealed values show as [sealed].

    Example: canal state show run-7f3a --json
    """
    store = project_store()
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
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def verify(as_json: bool) -> None:
    """Check every state file of this project: keys, ciphertexts, integrity, revisions.

    Example: canal state verify
    """
    store = project_store()
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
