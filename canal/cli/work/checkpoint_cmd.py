"""``canal checkpoints``, ``canal diff``, ``canal undo``: every change to the workspace can be undone."""

from __future__ import annotations

import click

from canal.cli.shared import App, change_lines, echo_json, json_option, pass_app
from canal.core.display import visible
from canal.runtime.surface import HistoryRow, UndoResult

SHOWN = 20  # checkpoints listed unless asked for more: a day of commands keeps thousands


@click.command("checkpoints")
@click.option("--prune", is_flag=True, help="Apply retention now (never inside the floor; the newest is "
              "always kept).")
@click.option("--before", metavar="CHECKPOINT", help="With --prune: also drop every checkpoint older than "
              "this one (inside the floor, only a person at a terminal may).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Show the newest N (default {SHOWN}).")
@click.option("--all", "show_all", is_flag=True, help="Show every kept checkpoint.")
@json_option()
@pass_app
def checkpoints_cmd(app: App, prune: bool, before: str | None, limit: int | None, show_all: bool,
                    as_json: bool) -> None:
    """List the workspace's newest checkpoints: time, the command that followed, files changed after it.

    A checkpoint is taken before every command that may change the workspace. What one did not cover
    (.gitignore'd paths, files over the size cap) is listed under it. Example: canal checkpoints --limit 5
    """
    canal = app.canal
    if before is not None and not prune:
        msg = "--before goes with --prune"
        raise click.UsageError(msg)
    if show_all and limit is not None:
        msg = "--limit and --all: give one of them"
        raise click.UsageError(msg)
    pruned = canal.prune_checkpoints(before=before, person=app.is_person()) if prune else []
    history = canal.checkpoints(None if show_all else limit or SHOWN)
    rows = history.rows
    if as_json:
        echo_json({"status": "ok", "pruned": pruned,
                   "checkpoints": [r.model_dump(mode="json") for r in rows],
                   "corrupt": [c.model_dump(mode="json") for c in history.corrupt], "older": history.older})
        return
    if pruned:
        click.echo(f"pruned {', '.join(pruned)}")
    for bad in history.corrupt:
        click.echo(f"{bad.id:<8} CORRUPT record {bad.record}: {bad.why}; never restored from (kept as "
                   "evidence)", err=True)
    if not rows:
        click.echo("no checkpoints yet (one is taken before each command: canal run -- CMD)")
        return
    if history.older:
        click.echo(f"{history.older} older checkpoint{'s' if history.older > 1 else ''} not shown: "
                   f"canal checkpoints --all (or --limit N)")
    for row in rows:
        click.echo(_row(row))
    click.echo(f"undo the last command that changed something: canal undo   |   "
               f"see changes: canal diff {rows[-1].checkpoint.id}")


def _row(row: HistoryRow) -> str:
    cp, after = row.checkpoint, row.changed_after
    when = cp.created_at[:19].replace("T", " ")
    what = visible(cp.command) or f"({cp.kind})"
    changed = (f"+{after.added} ~{after.modified} -{after.deleted}" if after.total else "no change")
    line = f"{cp.id:<8} {when}  {changed:<14} {what}" + ("  (pinned)" if cp.pinned else "")
    if after.paths:
        ellipsis = " …" if after.total > len(after.paths) else ""
        line += "\n         changed after: " + visible(", ".join(after.paths)) + ellipsis
    if cp.not_covered_total:
        shown = ", ".join(f"{visible(n.path)} ({n.reason})" for n in cp.not_covered[:5])
        more = cp.not_covered_total - min(5, len(cp.not_covered))
        line += f"\n         not covered: {shown}" + (f", +{more} more (--json lists 50)" if more > 0 else "")
    return line


@click.command("diff")
@click.argument("checkpoint", required=False)
@json_option()
@pass_app
def diff_cmd(app: App, checkpoint: str | None, as_json: bool) -> None:
    """Show what changed in the workspace since CHECKPOINT (default: the newest, i.e. the last command).

    Text files as a unified diff; binary, mode, symlink and deletion lines after it.
    Example: canal diff cp-3
    """
    result = app.canal.diff(checkpoint)
    if as_json:
        echo_json({"status": "ok", **result.model_dump(mode="json")})
        return
    if not result.changes:
        click.echo(f"no change since {result.checkpoint}")
        return
    if result.patch:
        click.echo(result.patch, nl=False)
    for line in change_lines(result.changes):
        click.echo(line)
    click.echo(f"[{len(result.changes)} path(s) changed since {result.checkpoint} | "
               f"undo: canal undo {result.checkpoint}]")


@click.command("undo")
@click.argument("checkpoint", required=False)
@click.option("--last-command", is_flag=True, help="Undo the newest command even if it changed nothing.")
@json_option()
@pass_app
def undo_cmd(app: App, checkpoint: str | None, last_command: bool, as_json: bool) -> None:
    """Put the workspace back as it was at CHECKPOINT (default: before the newest command that changed
    something; it is named).

    Bytes, modes and symlinks. A checkpoint is taken first, so an undo can itself be undone.
    Example: canal undo cp-3
    """
    if checkpoint is not None and last_command:
        msg = "name a CHECKPOINT or pass --last-command, not both"
        raise click.UsageError(msg)
    result = app.canal.undo(checkpoint, last_command=last_command)
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    click.echo(_undo_text(result))


STRIPPED = "restored without its setuid/setgid bits (Canal never writes a privileged file)"


def _undo_text(result: UndoResult) -> str:
    lines = [f"{c.kind:<9} {visible(c.path)}" for c in result.changes]
    if result.skipped:
        lines.append(f"skipped {', '.join(result.skipped)}: nothing changed after them")
    what = visible(result.command) or f"({result.kind})"
    lines.append(f"undid: {what}")
    lines.append(f"restored {len(result.changes)} path(s) to {result.restored_to} | "
                 f"revert this undo: canal undo {result.before_undo}")
    lines.extend(f"left alone: {visible(n.path)} ({n.reason})" for n in result.left_alone)
    lines.extend(f"{STRIPPED}: {visible(path)}" for path in result.stripped)
    return "\n".join(lines)


def register(group: click.Group) -> None:
    for command in (checkpoints_cmd, diff_cmd, undo_cmd):
        group.add_command(command)
