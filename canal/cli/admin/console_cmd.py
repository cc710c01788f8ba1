"""``canal console``: serve this project's web console (approvals with passkeys, the audit log, sandboxes,
tasks, workflow runs) on http://localhost:PORT, PORT being ``approvals.console.port`` (default 8765).

Through the Canal server (the usual case) the console runs inside the server, which keeps serving it and
stays up while an approver is logged in; the command prints the URL and returns. Without a server
(``CANAL_NO_SERVER=1``) it serves in the foreground until Ctrl-C. The CLI finds the console through the
``canal.front_ends`` entry point, so it never imports it.
"""

from __future__ import annotations

import click

from canal.cli.shared import App, echo_json, front_end, json_option, pass_app


@click.command("console")
@json_option("Print the console's URL as JSON.")
@pass_app
def console(app: App, as_json: bool) -> None:
    """Serve the web console of this project on 127.0.0.1 and print its URL.

    Approvers log in with a passkey (registered on its /register page, trusted once its line is in
    canal.yaml and approved) and approve or deny pending confirmations; each decision is signed.

    Example: canal console
    """
    serve = front_end("console")

    def ready(url: str) -> None:
        if as_json:
            echo_json({"status": "ok", "url": url})
        else:
            click.echo(f"Canal console of {app.project_dir}: {url}")
            click.echo("Log in at /login (register a passkey at /register first); "
                       "it runs as long as the Canal server does (canal server stop ends it).", err=True)

    serve(app.project_dir, ready, app.resources)


def register(cli: click.Group) -> None:
    cli.add_command(console)
