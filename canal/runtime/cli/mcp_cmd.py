"""``canal mcp``: serve this project's sandbox, policy, workflows and file operations over MCP (stdio)."""

from __future__ import annotations

import logging
import os
import sys

import anyio
import click

from canal.runtime.config import CanalConfig
from canal.runtime.mcp.errors import ProfileLoosened
from canal.runtime.project import find_project_dir
from canal.runtime.services import Services

STRICTNESS = {"standard": 0, "strict": 1}


def _config(profile: str | None) -> CanalConfig | None:
    """canal.yaml, with --profile applied; it may tighten the project's policy, never loosen it."""
    if profile is None:
        return None
    config = Services(find_project_dir()).config  # the approved settings (CONFIG_UNAPPROVED if not)
    current = config.policy.profile
    if STRICTNESS[profile] < STRICTNESS[current]:
        msg = f"--profile {profile} is looser than this project's policy profile {current} (canal.yaml)"
        hint = f"canal mcp --profile {current}, or change policy.profile in canal.yaml"
        raise ProfileLoosened(msg, hint=hint)
    return config.model_copy(update={"policy": config.policy.model_copy(update={"profile": profile})})


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
def mcp(sandbox: str, profile: str | None, unattended: bool, no_elicit: bool, log_level: str) -> None:
    """Serve Canal's tools to an agent harness over MCP on stdin/stdout (run by the harness, not by hand).

    One long-lived process: the policy is compiled once and the sandbox session stays warm. The log
    goes to stderr; stdout carries only the protocol.

    \b
    Example (a harness's MCP configuration):
      {"mcpServers": {"canal": {"command": "canal", "args": ["mcp"], "cwd": "/path/to/project"}}}
    """
    from canal.runtime.api import Canal
    from canal.runtime.mcp import CanalMcp, ServerOptions, serve_stdio

    logging.basicConfig(stream=sys.stderr, level=log_level.upper(),
                        format="%(asctime)s canal-mcp %(levelname)s %(name)s: %(message)s")
    canal = Canal(find_project_dir(), sandbox=sandbox, unattended=True if unattended else None,
                  actor=os.environ.get("CANAL_ACTOR") or "agent", config=_config(profile))
    app = CanalMcp(canal, ServerOptions(elicit=not no_elicit))
    try:
        anyio.run(serve_stdio, app)
    finally:
        canal.close()


def register(cli: click.Group) -> None:
    cli.add_command(mcp)
