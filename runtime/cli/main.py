"""The ``canal`` command: parses arguments, calls the library, renders. One error boundary for all."""

from __future__ import annotations

import importlib
import json
from typing import Any

import click

from runtime.errors import ExitCode, error_json, is_canal_error, render_error

# Each module exposes ``register(group)``; one module per command group keeps this file small.
COMMAND_MODULES = (
    "runtime.cli.run_cmd",
    "runtime.cli.sandbox_cmd",
    "runtime.cli.image_cmd",
    "runtime.cli.policy_cmd",
    "runtime.cli.doctor_cmd",
    "runtime.cli.key_cmd", "runtime.cli.state_cmd",
    "runtime.cli.audit_cmd", "runtime.cli.approve_cmd",
    "runtime.cli.files_cmd",
    "runtime.cli.workflow_cmd",
    "runtime.cli.mcp_cmd",
    "runtime.cli.tool_cmd", "runtime.cli.discover_cmd", "runtime.cli.help_cmd",
)


class CanalGroup(click.Group):
    """Renders every Canal error in one shape, on stderr (or as JSON on stdout with --json)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options = args[: args.index("--")] if "--" in args else args
        ctx.meta["canal.json"] = "--json" in options
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if not is_canal_error(exc):
                raise
            wants_json = bool(ctx.meta.get("canal.json"))
            if wants_json:
                click.echo(json.dumps(error_json(exc), indent=2))  # type: ignore[arg-type]
            else:
                click.echo(render_error(exc), err=True)  # type: ignore[arg-type]
            ctx.exit(getattr(exc, "exit_code", ExitCode.CANAL_ERROR))


@click.group(cls=CanalGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="canal")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Canal: run commands in hardened sandboxes under a policy, with output made for models."""
    if ctx.invoked_subcommand is None:
        from runtime.cli.help_cmd import level0_index
        from runtime.project import find_project_dir

        click.echo(level0_index(cli, find_project_dir()))


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(cli)


def main() -> None:
    cli(prog_name="canal")
