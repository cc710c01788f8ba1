"""Progressive disclosure for the whole CLI.

Level 0: ``canal`` alone prints ``level0_index``: one line per command plus the project's discovered
workflows and tools. Level 1: ``canal CMD --help`` (click's page, with an example that runs).
Level 2: ``canal help CMD --full``: every option with its type, default and environment variable, the
edge cases and the security notes, generated from click's own metadata plus ``NOTES``.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import click

from canal.cli.shared import app_of
from canal.core.errors import EXIT_CODES as CORE_EXIT_CODES
from canal.runtime.wfrun.factory import EXAMPLES, workflow_roots
from canal.workflows.engine import summarize_workflows
from canal.workflows.tools.index import entry_lines, read_index

# Edge cases and security notes per command path; a command may also carry them in its ``epilog``.
NOTES: dict[str, tuple[str, ...]] = {
    "discover": (
        "Writes <project>/.canal/discover/: index.txt, index.json, tools/<name>.json, rules/<name>.rules "
        "(0600, atomic). Nothing secret is written: parameter values never reach these files.",
        "A malformed tool, WorkFlow.md or rules line stops the run before anything is written, naming "
        "file:line; the previous index stays.",
        "Rules lines ending in #auto are regenerated each run; lines a person wrote are kept and win over "
        "generated ones for the same field (KEEP:<field> undoes an automatic IGNORE).",
        "Rules files of removed tools are kept (they may hold lines a person wrote); metadata files are "
        "deleted.",
    ),
    "tool meta": (
        "Fields come from tools/<name>.yaml as it is now, with the rules file applied; run canal discover "
        "first to create an editable rules file.",
        "An IGNORE rule never hides a required field without a default.",
    ),
    "tool call": (
        "Validation is the workflow gate's: missing required fields are listed with their descriptions; "
        "wrong types, enum and pattern violations are listed too; undeclared fields are dropped.",
        "Values become whole argv elements or environment variables; a tool definition that puts a "
        "template inside code (bash -c, python -c, awk programs, ssh) is refused when loaded.",
        "A string filling a whole argv element may not start with '-' unless it follows a literal '--'.",
        "Sensitive parameters may only reach the command through env:, never argv.",
        "The command goes through the run pipeline: policy decides allow/confirm/deny; a destructive tool "
        "stops with CONFIRMATION_REQUIRED and the exact command to rerun with --confirm.",
        "script: tools get their parameters as one JSON object in $CANAL_TOOL_PARAMS.",
    ),
}

EXIT_CODES = ((0, "success"), *CORE_EXIT_CODES)


WIDTH = 100


def _short(cmd: click.Command) -> str:
    text = " ".join(cmd.get_short_help_str(limit=10_000).split())  # whole: the index wraps it
    if isinstance(cmd, click.Group):
        verbs = [n for n in cmd.list_commands(click.Context(cmd)) if not _hidden(cmd, n)]
        text += f" ({'|'.join(verbs)})" if verbs else ""
    return text


def _hidden(group: click.Group, name: str) -> bool:
    cmd = group.get_command(click.Context(group), name)
    return cmd is None or cmd.hidden


def level0_index(cli_group: click.Group, project_dir: Path) -> str:
    """One line per command, then the project's workflows and tools from the cached discover index."""
    ctx = click.Context(cli_group, info_name="canal")
    lines = [cli_group.get_short_help_str(limit=100), "commands:"]
    for name in cli_group.list_commands(ctx):
        cmd = cli_group.get_command(ctx, name)
        if cmd is not None and not cmd.hidden:
            lines.extend(textwrap.wrap(f"{name}: {_short(cmd)}", WIDTH, initial_indent="  ",
                                       subsequent_indent="      ", break_on_hyphens=False))
    index = read_index(project_dir)
    if index is None:
        lines.append("project tools and workflows: none indexed yet (run: canal discover)")
    else:
        lines.extend(entry_lines(index))
    shipped = [w for w in summarize_workflows(workflow_roots(project_dir))
               if Path(w.path).is_relative_to(EXAMPLES)]
    if shipped:
        lines.append("shipped workflows (canal workflow start NAME):")
        lines.extend(f"  {w.name}: {w.description}" for w in shipped)
    lines.append("more: canal CMD --help (with an example), canal help CMD --full (every option)")
    return "\n".join(lines)


def resolve(root: click.Group, path: tuple[str, ...]) -> tuple[click.Command, click.Context]:
    """The command at ``path`` under ``root`` and a context chain for its usage line."""
    ctx = click.Context(root, info_name="canal")
    cmd: click.Command = root
    for part in path:
        sub = cmd.get_command(ctx, part) if isinstance(cmd, click.Group) else None
        if sub is None:
            msg = f"no command {' '.join(path)!r}; the commands are listed by: canal help"
            raise click.UsageError(msg)
        ctx = click.Context(sub, info_name=part, parent=ctx)
        cmd = sub
    return cmd, ctx


def _param_line(param: click.Parameter, ctx: click.Context) -> str:
    if isinstance(param, click.Argument):
        return f"  {param.human_readable_name}  argument, {'required' if param.required else 'optional'}"
    assert isinstance(param, click.Option)
    names = ", ".join([*param.opts, *param.secondary_opts])
    kind = "flag" if param.is_flag else param.type.name
    facts = [kind, "required" if param.required else "optional"]
    if isinstance(param.type, click.Choice):
        facts.append("one of " + "|".join(map(str, param.type.choices)))
    if param.multiple:
        facts.append("repeatable")
    default = param.get_default(ctx, call=False)
    # Only plain values: click marks "no default" with a private sentinel object.
    if isinstance(default, (str, int, float, list, tuple)) and default not in ("", (), []) \
            and not isinstance(default, bool):
        facts.append(f"default {default!r}")
    if param.envvar:
        facts.append(f"env {param.envvar}")
    return f"  {names}  {', '.join(facts)}. {param.help or ''}".rstrip()


def full_page(cmd: click.Command, ctx: click.Context, path: tuple[str, ...]) -> str:
    """Level 2: usage, the whole help text, every parameter, subcommands, notes, exit codes."""
    usage = f"  {ctx.command_path} {' '.join(cmd.collect_usage_pieces(ctx))}"
    lines = [f"{ctx.command_path}: {cmd.get_short_help_str(limit=100)}", "", "USAGE", usage]
    help_lines = [ln for ln in inspect.cleandoc(cmd.help or "").splitlines() if ln.strip() != "\b"]
    lines += ["", "DESCRIPTION", *(f"  {ln}" if ln else "" for ln in help_lines)]
    params = [p for p in cmd.get_params(ctx)
              if not getattr(p, "hidden", False) and "--help" not in getattr(p, "opts", ())]
    lines += ["", "PARAMETERS", *(_param_line(p, ctx) for p in params)]
    if isinstance(cmd, click.Group):
        lines += ["", "SUBCOMMANDS"]
        lines += [f"  {n}: {_short(c)}" for n in cmd.list_commands(ctx)
                  if (c := cmd.get_command(ctx, n)) is not None and not c.hidden]
    notes = [*NOTES.get(" ".join(path), ()), *([cmd.epilog] if cmd.epilog else [])]
    if notes:
        lines += ["", "NOTES (edge cases, security)", *(f"  - {n}" for n in notes)]
    lines += ["", "EXIT CODES", *(f"  {code}  {what}" for code, what in EXIT_CODES)]
    return "\n".join(ln.rstrip() for ln in lines)


@click.command("help")
@click.argument("command", nargs=-1)
@click.option("--full", is_flag=True, help="Level 2: every option, edge case and security note.")
@click.pass_context
def help_command(ctx: click.Context, command: tuple[str, ...], full: bool) -> None:
    """Help in three levels: canal help (index), canal help CMD, canal help CMD --full.

    \b
    Example:
      canal help tool call --full
    """
    root = ctx.find_root().command
    assert isinstance(root, click.Group)
    if not command:
        click.echo(level0_index(root, app_of(ctx).project_dir))
        return
    cmd, sub_ctx = resolve(root, command)
    click.echo(full_page(cmd, sub_ctx, command) if full else cmd.get_help(sub_ctx))


def register(cli: click.Group) -> None:
    cli.add_command(help_command)
