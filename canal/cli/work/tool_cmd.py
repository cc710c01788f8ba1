"""``canal tool list|meta|call``: the project's tools, one at a time, as an agent needs them."""

from __future__ import annotations

import json
import shlex
from typing import Any

import click

from canal.cli.shared import App, echo_json, json_option, pass_app
from canal.cli.words import say
from canal.core.next import act
from canal.runtime.run.result import RunResult
from canal.runtime.tools import example_args, meta_lines
from canal.workflows.tools import ToolMeta
from canal.workflows.tools.errors import TOOL_ARGS_INVALID


@click.group("tool")
def tool() -> None:
    """List the project's tools, show one tool's fields, call a tool in a sandbox.

    \b
    Example:
      canal tool list
      canal tool meta create_project --required-only
      canal tool call list_files --args '{"path": "src"}'
    """


@tool.command("list")
@json_option("Print the tools as JSON.")
@pass_app
def list_tools(app: App, as_json: bool) -> None:
    """One line per tool in tools/: name and description.

    \b
    Example:
      canal tool list
    """
    registry = app.canal.tools.registry
    if as_json:
        echo_json({"status": "ok", "tools": [{"name": t.name, "description": t.description,
                                               "idempotent": t.idempotent, "result": t.result}
                                              for t in registry]})
        return
    for t in registry:
        click.echo(f"{t.name}: {t.description}")
    if not len(registry):
        click.echo("no tools: add tools/<name>.yaml, then run: canal discover", err=True)


def render_meta(meta: ToolMeta) -> str:
    call = act("tool.call", name=meta.name, args=example_args(meta))
    return "\n".join([*meta_lines(meta), f"call: {say(call)}"])


@tool.command("meta")
@click.argument("name")
@click.option("--required-only", is_flag=True, help="Show only the fields a call must supply.")
@json_option("Print the fields as JSON.")
@pass_app
def meta(app: App, name: str, required_only: bool, as_json: bool) -> None:
    """The fields of one tool, after its rules (ignored fields left out, notes and enum labels in).

    \b
    Example:
      canal tool meta create_project --required-only
    """
    view = app.canal.tools.meta(name, required_only=required_only)
    if as_json:
        echo_json({"status": "ok", "tool": view.model_dump(exclude_defaults=True, exclude={"version"})})
    else:
        click.echo(render_meta(view))


def parse_args_json(tool_name: str, raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        msg = f"--args is not JSON: {exc}"
        raise TOOL_ARGS_INVALID(msg, hint=f"canal tool meta {tool_name}",
                                details={"tool": tool_name}) from None
    if not isinstance(data, dict):
        msg = "--args must be a JSON object of field values"
        raise TOOL_ARGS_INVALID(msg, hint=f"canal tool meta {tool_name}", details={"tool": tool_name})
    return data


@tool.command("call")
@click.argument("name")
@click.option("--args", "args_json", default="{}", show_default=True, metavar="JSON",
              help="Field values as one JSON object.")
@click.option("--confirm", metavar="TOKEN", help="Approval token from a CONFIRMATION_REQUIRED reply.")
@json_option()
@pass_app
def call(app: App, name: str, args_json: str, confirm: str | None, as_json: bool) -> None:
    """Validate the arguments like a gate, then run the tool in a sandbox through policy.

    A missing required field is rejected with the list of fields; nothing runs. Values reach the
    command only as whole argv elements or environment variables.

    \b
    Example:
      canal tool call list_files --args '{"path": "."}'
    """
    result = app.canal.call_tool(name, parse_args_json(name, args_json), confirm=confirm, say=say)
    render_call(name, args_json, result, as_json)


def render_call(name: str, args_json: str, result: RunResult, as_json: bool) -> None:
    """The presenter's text (or the JSON result); a confirmation names the exact tool call to rerun."""
    if result.status == "confirmation_required" and result.confirmation is not None:
        token = result.confirmation.token
        rerun = f"canal tool call {name} --args {shlex.quote(args_json)} --confirm {token}"
        if as_json:
            data = result.to_json()
            data["confirmation"]["rerun"] = rerun  # the one confirmation shape (runtime.run.result)
            echo_json(data)
        else:
            click.echo(f"CONFIRMATION_REQUIRED\n{result.confirmation.reason}. Nothing was run.\n"
                       f"Ask the user, then run: {rerun}", err=True)
    elif as_json:
        echo_json(result.to_json())
    else:
        text = result.text or result.output
        click.echo(text, nl=not text.endswith("\n"), err=result.refused)
    code = result.process_exit_code()
    if code:
        raise SystemExit(code)


def register(cli: click.Group) -> None:
    cli.add_command(tool)
