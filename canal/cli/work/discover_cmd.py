"""``canal discover``: bring the project's tool and workflow index up to date."""

from __future__ import annotations

import json
from pathlib import Path

import click

from canal.cli.shared import App, json_option, pass_app
from canal.core.errors import CanalError
from canal.core.fsutil import atomic_write_text
from canal.runtime.trust.snapshot import take_snapshot
from canal.workflows.tools import discover as run_discover


@click.command("discover")
@json_option("Print only the summary object (same line, no notes).")
@pass_app
def discover(app: App, as_json: bool) -> None:
    """Scan tools/ and workflows/, compare with the cached index, regenerate it.

    Prints one summary line: what was added and removed since the last run. Writes
    .canal/discover/ (index, one metadata and one rules file per tool) in the project.

    \b
    Example:
      canal discover
      {"status":"ok","total":5,"added_count":2,"removed_count":0,"added":["tool_a","tool_b"],...}
    """
    if unverified_servers(app.project_dir):  # asking servers needs the approved settings
        result, problems = app.canal.tools.discover()
    else:
        result, problems = run_discover(app.project_dir, atomic_write_text), []
    click.echo(json.dumps(result.summary.model_dump(), separators=(",", ":")))
    for problem in problems:
        click.echo(f"{problem.code}: {problem.message} Its tools from the last discover are kept.", err=True)
    for skipped in result.skipped:
        click.echo(f"{skipped.code}: MCP server {skipped.server} lists {skipped.tool}, left out: "
                   f"{skipped.problem}", err=True)
    if not as_json:
        lines = len(result.index_text.splitlines())
        click.echo(f"index: {result.index_path} ({lines} lines, ~{result.index_tokens} tokens)", err=True)


def unverified_servers(project_dir: Path) -> bool:
    """Whether canal.yaml as it is now names MCP servers (read only to choose the way; using them reads
    the approved settings, and refuses when they are not)."""
    try:
        return bool(take_snapshot(project_dir).config.tools.mcp_servers)
    except CanalError:
        return True  # a broken or unreadable canal.yaml: the approved-settings way says what is wrong


def register(cli: click.Group) -> None:
    cli.add_command(discover)
