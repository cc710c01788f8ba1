"""``canal state show ID [--json] [--reveal]`` and ``canal state verify``: sealed state files."""

from __future__ import annotations

import click

from canal.cli.shared import App, echo_json, json_option, pass_app


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
    found = app.canal.state.show(doc_id, reveal=reveal)  # verified before anything is shown
    if as_json:
        echo_json({"status": "ok", **found.model_dump()})
        return
    click.echo(f"{doc_id}  revision {found.revision}  key {found.key_id}  written {found.written_at}")
    click.echo(f"sealed: {', '.join(found.sealed) or 'none'}{'  (revealed)' if reveal else ''}")
    echo_json(found.doc)


@state.command("verify")
@json_option("Print the results as JSON.")
@pass_app
def verify(app: App, as_json: bool) -> None:
    """Check every state file of this project: keys, ciphertexts, integrity, revisions.

    Example: canal state verify
    """
    report = app.canal.state.verify()  # a document the ledger recorded whose file is gone fails too
    failed = report.failed
    if as_json:
        echo_json({"status": "failed" if failed else "ok", "root": report.root,
                   "documents": [r.to_json() for r in report.documents]})
    else:
        for r in report.documents:
            click.echo(f"{'ok  ' if r.status == 'ok' else 'FAIL'} {r.doc_id:<32} "
                       f"{r.revision if r.revision is not None else r.code or ''}")
            if r.status != "ok":
                click.echo(f"     {r.message}\n     next: {r.hint}")
        click.echo(f"{len(report.documents) - len(failed)} ok, {len(failed)} failed ({report.root})")
    if failed:
        raise SystemExit(1)


def register(cli: click.Group) -> None:
    cli.add_command(state)
