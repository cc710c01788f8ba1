"""The ``canal`` command: parses arguments, calls the library, renders. One error boundary for all."""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from canal.cli.shared import App
from canal.cli.words import error_data, error_text
from canal.core.errors import CanalError

# Command name -> the module whose ``register(group)`` adds it. Modules load only when their command
# runs, so ``canal run`` does not pay for importing the MCP server or the workflow engine.
COMMANDS: dict[str, str] = {
    "run": "canal.cli.work.run_cmd",
    **dict.fromkeys(("up", "down", "ps", "gc"), "canal.cli.work.sandbox_cmd"),
    "image": "canal.cli.admin.image_cmd",
    "policy": "canal.cli.admin.policy_cmd",
    "doctor": "canal.cli.admin.doctor_cmd",
    "init": "canal.cli.admin.init_cmd",
    "config": "canal.cli.admin.config_cmd",
    "key": "canal.cli.admin.key_cmd",
    "state": "canal.cli.admin.state_cmd",
    "audit": "canal.cli.admin.audit_cmd",
    "egress": "canal.cli.work.egress_cmd",
    **dict.fromkeys(("approve", "approvals"), "canal.cli.admin.approve_cmd"),
    **dict.fromkeys(("rm", "restore", "trash", "edit", "write", "view"), "canal.cli.work.files_cmd"),
    **dict.fromkeys(("checkpoints", "diff", "undo"), "canal.cli.work.checkpoint_cmd"),
    **dict.fromkeys(("fork", "changes", "apply", "discard"), "canal.cli.work.fork_cmd"),
    "workflow": "canal.cli.work.workflow_cmd",
    "mcp": "canal.cli.admin.mcp_cmd",
    "console": "canal.cli.admin.console_cmd",
    "tool": "canal.cli.work.tool_cmd",
    "discover": "canal.cli.work.discover_cmd",
    "help": "canal.cli.admin.help_cmd",
    "server": "canal.cli.admin.server_cmd",
    "task": "canal.cli.work.task_cmd",
    "port-forward": "canal.cli.work.forward_cmd",
    "swerex": "canal.cli.admin.swerex_cmd",
}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def load_command(name: str) -> click.Command | None:
    module = COMMANDS.get(name)
    if module is None:
        return None
    scratch = click.Group()
    importlib.import_module(module).register(scratch)
    return scratch.commands.get(name)


class CanalGroup(click.Group):
    """Loads commands lazily; renders every Canal error in one shape, on stderr (or JSON with --json)."""

    def __init__(self, *args: Any, lazy: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})  # command name -> module, loaded on first use

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        return load_command(cmd_name) if cmd_name in self.lazy else None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options = args[: args.index("--")] if "--" in args else args
        ctx.meta["canal.json"] = "--json" in options
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CanalError as exc:
            wants_json = bool(ctx.meta.get("canal.json"))
            if wants_json:
                click.echo(json.dumps(error_data(exc), indent=2))
            else:
                click.echo(error_text(exc), err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=CanalGroup, invoke_without_command=True, lazy=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--project", "-C", "project", metavar="DIR",
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Run as if canal was started in DIR: the project is the nearest folder upward from DIR "
                   "with canal.yaml, and relative paths start at DIR.")
@click.version_option(package_name="canal-sandbox")
@click.pass_context
def cli(ctx: click.Context, project: Path | None) -> None:
    """Canal: run commands in hardened sandboxes under a policy, with output made for models."""
    app = App(ctx, start=project, resources=ctx.obj)  # the server's, when it runs this CLI (served.py)
    ctx.obj = app
    if ctx.invoked_subcommand is None:
        from canal.cli.admin.help_cmd import level0_index

        click.echo(level0_index(cli, app.project_dir))


def main() -> None:
    cli(prog_name="canal")
