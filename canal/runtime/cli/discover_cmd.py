"""``canal discover``: bring the project's tool and workflow index up to date."""

from __future__ import annotations

import json

import click

from canal.core.fsutil import atomic_write_text
from canal.runtime.cli.shared import App, json_option, pass_app
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
    result = run_discover(app.project_dir, atomic_write_text)
    click.echo(json.dumps(result.summary.model_dump(), separators=(",", ":")))
    if not as_json:
        lines = len(result.index_text.splitlines())
        click.echo(f"index: {result.index_path} ({lines} lines, ~{result.index_tokens} tokens)", err=True)


def register(cli: click.Group) -> None:
    cli.add_command(discover)
