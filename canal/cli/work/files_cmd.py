"""``canal rm / restore / trash / edit / write / view``: reversible operations on workspace files.

Paths are relative to the working directory and confined to the project folder (the workspace).
Deletions go to the host-side trash under the project's state folder, never inside a sandbox mount.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from canal.cli.shared import App, emit, json_option, pass_app
from canal.cli.words import say
from canal.core.duration import EXAMPLES, parse_duration
from canal.core.next import act
from canal.runtime.fileops import DEFAULT_MAX_BYTES, INVALID_RANGE
from canal.runtime.surface import RemoveOutcome


@click.command("rm")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-r", "--recursive", is_flag=True, help="Remove folders with everything in them.")
@json_option()
@pass_app
def rm_cmd(app: App, paths: tuple[Path, ...], recursive: bool, as_json: bool) -> None:
    """Move files (and with -r folders) to the trash; each can be restored.

    A path that is already gone is reported, not an error. Example: canal rm build.log
    """
    checkpoint = app.canal.files.checkpoint(shlex.join(["canal", "rm", *map(str, paths)]))
    outcomes = app.canal.files.remove(paths, recursive=recursive, base=app.base, person=app.is_person())
    emit_undoable(as_json, {"status": "ok", "results": [o.model_dump(mode="json") for o in outcomes]},
                  "\n".join(_removed_line(o) for o in outcomes), checkpoint)


@click.command("restore")
@click.argument("entry_id")
@click.option("--to", "to", type=click.Path(path_type=Path), help="Restore to this path instead.")
@click.option("--force", is_flag=True, help="Replace an existing file (it goes to the trash first).")
@json_option()
@pass_app
def restore_cmd(app: App, entry_id: str, to: Path | None, force: bool, as_json: bool) -> None:
    """Put a trashed file or folder back where it was (or at --to), with its modes.

    Example: canal restore t20250101T120000Z-3f9a2c
    """
    target = app.base / to if to is not None else None
    checkpoint = app.canal.files.checkpoint(f"canal restore {entry_id}")
    result = app.canal.files.restore(entry_id, to=target, force=force, person=app.is_person())
    text = f"restored {result.entry.id} to {result.restored_to}"
    if result.displaced_id:
        text += (" | the file that was there is in the trash: "
                 f"{say(act('restore', trash_id=result.displaced_id, to='PATH'))}")
    emit_undoable(as_json, result.model_dump(mode="json"), text, checkpoint)


@click.group("trash")
def trash_group() -> None:
    """List or purge the trash of this project."""


@trash_group.command("list")
@json_option()
@pass_app
def trash_list(app: App, as_json: bool) -> None:
    """List trashed items, oldest first, with the command to restore each.

    Example: canal trash list
    """
    entries = app.canal.files.trashed()
    rows = [f"{e.id}  {e.deleted_at:%Y-%m-%d %H:%M:%SZ}  {e.kind:<7} {e.size:>10}  {e.rel_path}"
            for e in entries]
    text = "\n".join(rows) if rows else "the trash is empty"
    emit(as_json, {"status": "ok", "entries": [e.model_dump(mode="json") for e in entries]}, text)


@trash_group.command("purge")
@click.option("--older-than", "older_than", required=True, help=f"Age: a number and one unit ({EXAMPLES}).")
@json_option()
@pass_app
def trash_purge(app: App, older_than: str, as_json: bool) -> None:
    """Delete for good the items trashed longer ago than --older-than (recorded in the audit log).

    Example: canal trash purge --older-than 30d
    """
    age = parse_duration(older_than, "--older-than")
    purged = app.canal.files.purge(age)
    text = f"purged {len(purged)} item(s) trashed more than {older_than} ago"
    emit(as_json, {"status": "ok", "purged": [e.model_dump(mode="json") for e in purged]}, text)


@click.command("edit")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--old", required=True, help="The exact text to replace (whitespace included).")
@click.option("--new", required=True, help="The text to put in its place.")
@click.option("--all", "replace_all", is_flag=True, help="Replace every occurrence.")
@click.option("--expect-sha256", help="Refuse if the file's sha256 is not this (as shown by view --json).")
@json_option()
@pass_app
def edit_cmd(app: App, path: Path, old: str, new: str, replace_all: bool, expect_sha256: str | None,
             as_json: bool) -> None:
    """Replace exact text in a file; prints the unified diff.

    Example: canal edit app.py --old "return 1" --new "return 2"
    """
    checkpoint = app.canal.files.checkpoint(f"canal edit {shlex.quote(str(path))}")
    result = app.canal.files.edit(path, old, new, replace_all=replace_all, base=app.base,
                                  expect_sha256=expect_sha256, person=app.is_person())
    emit_undoable(as_json, result.model_dump(mode="json"), result.to_text(say), checkpoint)


@click.command("write")
@click.argument("path", type=click.Path(path_type=Path))
@json_option()
@pass_app
def write_cmd(app: App, path: Path, as_json: bool) -> None:
    """Write stdin to a file; a replaced file is kept in the trash first.

    Example: printf 'hello\\n' | canal write notes.txt
    """
    data = sys.stdin.buffer.read(DEFAULT_MAX_BYTES + 1)
    checkpoint = app.canal.files.checkpoint(f"canal write {shlex.quote(str(path))}")
    result = app.canal.files.write(path, data, base=app.base, person=app.is_person())
    emit_undoable(as_json, result.model_dump(mode="json"), result.to_text(say), checkpoint)


@click.command("view")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option("--range", "line_range", help="Lines A:B (1-based, inclusive); A: or :B work too.")
@json_option()
@pass_app
def view_cmd(app: App, path: Path, line_range: str | None, as_json: bool) -> None:
    """Show a file with line numbers, a folder's entries, or the facts of a binary file.

    Example: canal view README.md --range 1:40
    """
    start, end = parse_range(line_range, str(path))
    result = app.canal.files.view(path, base=app.base, start=start, end=end)
    emit(as_json, result.model_dump(mode="json"), result.to_text(say))


def emit_undoable(as_json: bool, data: dict[str, Any], text: str, checkpoint: str) -> None:
    """The result with the checkpoint taken before it: in the footer, and as ``checkpoint`` in JSON."""
    emit(as_json, {**data, "checkpoint": checkpoint},
         with_footer(text, f"checkpoint {checkpoint} (undo: {say(act('undo', checkpoint=checkpoint))})"))


def with_footer(text: str, part: str) -> str:
    """``[created x | part]`` when the text ends in a footer, else the part on a line of its own."""
    head, _, last = text.rpartition("\n")
    if last.startswith("[") and last.endswith("]"):
        return f"{head}\n{last[:-1]} | {part}]" if head else f"{last[:-1]} | {part}]"
    return f"{text}\n[{part}]" if text else f"[{part}]"


def parse_range(text: str | None, path: str) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    first, sep, last = text.partition(":")
    try:
        start = int(first) if first else None
        end = int(last) if last else (None if sep else start)
    except ValueError:
        msg = f"--range {text!r} is not A:B with line numbers."
        raise INVALID_RANGE(msg, hint=f"canal view {path} --range 1:40", details={"range": text}) from None
    return start, end


def _removed_line(outcome: RemoveOutcome) -> str:
    entry = outcome.entry
    if entry is None:
        return f"{outcome.path}: already gone, nothing to do"
    return (f"{outcome.path}: moved to the trash as {entry.id} ({entry.kind}, {entry.size} bytes) | "
            f"undo: {say(act('restore', trash_id=entry.id))}")


def register(cli: click.Group) -> None:
    for command in (rm_cmd, restore_cmd, trash_group, edit_cmd, write_cmd, view_cmd):
        cli.add_command(command)
