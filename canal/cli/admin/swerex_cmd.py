"""``canal swerex serve``: answer SWE-ReX's ``RemoteRuntime`` (SWE-agent's runtime) with this project's
sandboxes. The CLI checks the options and finds the front end through the ``canal.front_ends`` entry
point (``canal.swerex``), so it never imports the web stack; docs/swerex.md."""

from __future__ import annotations

import ipaddress
import os
import sys

import click

from canal.cli.shared import App, echo_json, front_end, json_option, pass_app
from canal.core.errors import CanalError
from canal.core.errors import register as register_code

ENV_KEY = "CANAL_SWEREX_API_KEY"
MIN_KEY = 16


SWEREX_API_KEY_MISSING = register_code(CanalError, "SWEREX_API_KEY_MISSING", """
    ``canal swerex serve`` starts only with an API key of at least 16 characters in
    ``CANAL_SWEREX_API_KEY``: every caller must present it (``X-API-Key``).
    """, exit_code=2)

SWEREX_HOST_REFUSED = register_code(CanalError, "SWEREX_HOST_REFUSED", """
    ``canal swerex serve --host`` takes a loopback address only: the endpoint runs commands.
    """, exit_code=2)


@click.group("swerex")
def swerex_group() -> None:
    """Serve SWE-ReX's runtime protocol, so SWE-agent and other SWE-ReX harnesses run on Canal."""


@swerex_group.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="A loopback address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), required=True, help="The port (0: any free one).")
@json_option("Print the endpoint's URL as JSON once it listens.")
@pass_app
def serve(app: App, host: str, port: int, as_json: bool) -> None:
    """Answer SWE-ReX's RemoteRuntime on http://HOST:PORT until stopped (Ctrl-C). Every command goes
    through this project's policy, checkpoints and audit (actor swerex); a command the policy would
    confirm is refused, as no person answers here. The API key is CANAL_SWEREX_API_KEY's value.

    \b
    Example: CANAL_SWEREX_API_KEY=$(openssl rand -hex 16) canal swerex serve --port 8880
    """
    key = os.environ.get(ENV_KEY, "")
    if len(key) < MIN_KEY:
        state = "unset" if not key else "shorter than 16 characters"
        msg = f"No API key: {ENV_KEY} is {state}; nothing served."
        raise SWEREX_API_KEY_MISSING(msg, hint=f"export {ENV_KEY}=$(openssl rand -hex 16), give the same "
                                     "value to RemoteRuntime(auth_token=...), then run canal swerex serve "
                                     "again")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        msg = f"--host {host} is not a loopback address; nothing served (the endpoint runs commands)."
        raise SWEREX_HOST_REFUSED(msg, hint="serve on 127.0.0.1 and reach it through an SSH tunnel or a "
                                "proxy of yours that authenticates callers")

    def ready(url: str) -> None:
        if as_json:
            echo_json({"status": "ok", "url": url})
        else:
            click.echo(f"SWE-ReX endpoint of {app.project_dir}: {url}")
        sys.stdout.flush()  # the caller waits for this line

    serve_swerex = front_end("swerex")
    serve_swerex(app.project_dir, host=host, port=port, api_key=key, on_ready=ready)


def register(cli: click.Group) -> None:
    cli.add_command(swerex_group)
