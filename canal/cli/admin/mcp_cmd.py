"""``canal mcp``: serve this project's sandbox, policy, workflows and file operations over MCP (stdio).

The CLI parses the verb's options and builds the Canal; the MCP front end (``canal.mcp``) serves
it. The CLI never imports the MCP package: it finds the server through the package metadata, the
``canal.front_ends`` entry point group that pyproject.toml declares next to the ``canal`` script. So
the two front ends stay independent, and the composition lives where the console script does.
"""

from __future__ import annotations

import logging
import sys

import click

from canal.cli.shared import FRONT_END_MISSING, App, front_end, pass_app
from canal.runtime.settings.config import STRICTNESS


@click.command("mcp")
@click.option("--sandbox", default="default", show_default=True, metavar="NAME",
              help="The sandbox every command runs in.")
@click.option("--profile", type=click.Choice(sorted(STRICTNESS)),
              help="Policy profile (default: canal.yaml's). Can only be stricter than the project's.")
@click.option("--unattended", is_flag=True,
              help="No person is around: commands that need confirmation are denied instead.")
@click.option("--no-elicit", is_flag=True,
              help="Never ask the person through the MCP client; they approve with `canal approve TOKEN`.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="warning",
              show_default=True, help="Log level of the server's log (always on stderr).")
@pass_app
def mcp(app: App, sandbox: str, profile: str | None, unattended: bool, no_elicit: bool,
        log_level: str) -> None:
    """Serve Canal's tools to an agent harness over MCP on stdin/stdout (run by the harness, not by hand).

    One long-lived process: the policy is compiled once and the sandbox session stays warm. The log
    goes to stderr; stdout carries only the protocol.

    \b
    Example (a harness's MCP configuration):
      {"mcpServers": {"canal": {"command": "canal", "args": ["mcp"], "cwd": "/path/to/project"}}}
    """
    serve = front_end("mcp")
    logging.basicConfig(stream=sys.stderr, level=log_level.upper(),
                        format="%(asctime)s canal-mcp %(levelname)s %(name)s: %(message)s")
    canal = app.open(sandbox=sandbox, unattended=True if unattended else None, profile=profile)
    serve(canal, elicit=not no_elicit)


__all__ = ["FRONT_END_MISSING", "front_end", "mcp"]


def register(cli: click.Group) -> None:
    cli.add_command(mcp)
