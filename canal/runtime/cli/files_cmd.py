"""``canal rm / restore / trash / edit / write / view``: reversible operations on workspace files.

Paths are relative to the working directory and confined to the project folder (the workspace).
Deletions go to the host-side trash under the project's state folder, never inside a sandbox mount.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from canal.runtime.approvals import ApproverUnverifiedError, identify_person
from canal.runtime.cli import approve_cmd
from canal.runtime.cli.render import echo_json
from canal.runtime.files import Protected, Workspace, edit_file, view_path, write_file
from canal.runtime.files.errors import InvalidRange
from canal.runtime.files.fileio import DEFAULT_MAX_BYTES
from canal.runtime.paths import state_dir_for
from canal.runtime.ports import AuditSink, Redactor
from canal.runtime.project import find_project_dir
from canal.runtime.services import Services
from canal.runtime.trash import Trash, parse_age, remove_paths
from canal.runtime.trust.snapshot import settings_files

JSON_HELP = "Print the result as JSON."


def _actor() -> str:
    return os.environ.get("CANAL_ACTOR") or "agent"


def _audit(project_dir: Path) -> AuditSink:
    # The audit log refuses to append without its key; an operation is never done unrecorded.
    return Services(project_dir).audit


def _redactor() -> Redactor:
    return Services(find_project_dir()).redactor


def _trash(project_dir: Path) -> Trash:
    return Trash(state_dir_for(project_dir) / "trash", _audit(project_dir))


def _guard(project: Path) -> Protected | None:
    """``None`` when a person runs the command (the approver check says so); else the files the
    agent's operations may not change (canal.yaml, policy files, git's code-running files)."""
    try:
        identify_person(None, approve_cmd.current_user(), terminal=approve_cmd.terminal_flags(),
                        registry=approve_cmd.open_registry)
    except ApproverUnverifiedError:
        return Protected.of(settings_files(project))
    return None


def _emit(as_json: bool, data: Any, text: str) -> None:
    if as_json:
        echo_json(data)
    else:
        click.echo(text)


@click.command("rm")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-r", "--recursive", is_flag=True, help="Remove folders with everything in them.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def rm_cmd(paths: tuple[Path, ...], recursive: bool, as_json: bool) -> None:
    """Move files (and with -r folders) to the trash; each can be restored.

    A path that is already gone is reported, not an error. Example: canal rm build.log
    """
    project = find_project_dir()
    outcomes = remove_paths(_trash(project), project, list(paths), recursive=recursive, base=Path.cwd(),
                            actor=_actor(), guard=_guard(project))
    _emit(as_json, {"status": "ok", "results": [o.model_dump(mode="json") for o in outcomes]},
          "\n".join(o.to_text() for o in outcomes))


@click.command("restore")
@click.argument("entry_id")
@click.option("--to", "to", type=click.Path(path_type=Path), help="Restore to this path instead.")
@click.option("--force", is_flag=True, help="Replace an existing file (it goes to the trash first).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def restore_cmd(entry_id: str, to: Path | None, force: bool, as_json: bool) -> None:
    """Put a trashed file or folder back where it was (or at --to), with its modes.

    Example: canal restore t20250101T120000Z-3f9a2c
    """
    project = find_project_dir()
    target = Path.cwd() / to if to is not None else None
    result = _trash(project).restore(entry_id, to=target, force=force, actor=_actor(),
                                     guard=_guard(project))
    text = f"restored {result.entry.id} to {result.restored_to}"
    if result.displaced_id:
        text += f" | the file that was there is in the trash: canal restore {result.displaced_id} --to PATH"
    _emit(as_json, result.model_dump(mode="json"), text)


@click.group("trash")
def trash_group() -> None:
    """List or purge the trash of this project."""


@trash_group.command("list")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def trash_list(as_json: bool) -> None:
    """List trashed items, oldest first, with the command to restore each.

    Example: canal trash list
    """
    project = find_project_dir()
    entries = Trash(state_dir_for(project) / "trash").list()
    rows = [f"{e.id}  {e.deleted_at:%Y-%m-%d %H:%M:%SZ}  {e.kind:<7} {e.size:>10}  {e.rel_path}"
            for e in entries]
    text = "\n".join(rows) if rows else "the trash is empty"
    _emit(as_json, {"status": "ok", "entries": [e.model_dump(mode="json") for e in entries]}, text)


@trash_group.command("purge")
@click.option("--older-than", "older_than", required=True, help="Age such as 30d, 12h, 2w.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def trash_purge(older_than: str, as_json: bool) -> None:
    """Delete for good the items trashed longer ago than --older-than (recorded in the audit log).

    Example: canal trash purge --older-than 30d
    """
    age = parse_age(older_than)
    project = find_project_dir()
    purged = _trash(project).purge(age, actor=_actor())
    text = f"purged {len(purged)} item(s) trashed more than {older_than} ago"
    _emit(as_json, {"status": "ok", "purged": [e.model_dump(mode="json") for e in purged]}, text)


@click.command("edit")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--old", required=True, help="The exact text to replace (whitespace included).")
@click.option("--new", required=True, help="The text to put in its place.")
@click.option("--all", "replace_all", is_flag=True, help="Replace every occurrence.")
@click.option("--expect-sha256", help="Refuse if the file's sha256 is not this (as shown by view --json).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def edit_cmd(path: Path, old: str, new: str, replace_all: bool, expect_sha256: str | None,
             as_json: bool) -> None:
    """Replace exact text in a file; prints the unified diff.

    Example: canal edit app.py --old "return 1" --new "return 2"
    """
    project = find_project_dir()
    result = edit_file(Workspace.at(project), path, old, new, replace_all=replace_all, base=Path.cwd(),
                       expect_sha256=expect_sha256, redactor=_redactor(), audit=_audit(project),
                       actor=_actor(), guard=_guard(project))
    _emit(as_json, result.model_dump(mode="json"), result.to_text())


@click.command("write")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def write_cmd(path: Path, as_json: bool) -> None:
    """Write stdin to a file; a replaced file is kept in the trash first.

    Example: printf 'hello\\n' | canal write notes.txt
    """
    project = find_project_dir()
    data = sys.stdin.buffer.read(DEFAULT_MAX_BYTES + 1)
    trash = _trash(project)
    workspace = Workspace.at(project)

    def backup(target: Path) -> str:
        return trash.put(target, workspace=workspace.root, move=False, actor=_actor()).id

    result = write_file(workspace, path, data, base=Path.cwd(), backup=backup, redactor=_redactor(),
                        audit=trash.audit, actor=_actor(), guard=_guard(project))
    _emit(as_json, result.model_dump(mode="json"), result.to_text())


@click.command("view")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option("--range", "line_range", help="Lines A:B (1-based, inclusive); A: or :B work too.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def view_cmd(path: Path, line_range: str | None, as_json: bool) -> None:
    """Show a file with line numbers, a folder's entries, or the facts of a binary file.

    Example: canal view README.md --range 1:40
    """
    start, end = parse_range(line_range, str(path))
    result = view_path(Workspace.at(find_project_dir()), path, base=Path.cwd(), start=start, end=end,
                       redactor=_redactor())
    _emit(as_json, result.model_dump(mode="json"), result.to_text())


def parse_range(text: str | None, path: str) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    first, sep, last = text.partition(":")
    try:
        start = int(first) if first else None
        end = int(last) if last else (None if sep else start)
    except ValueError:
        msg = f"--range {text!r} is not A:B with line numbers."
        raise InvalidRange(msg, hint=f"canal view {path} --range 1:40", details={"range": text}) from None
    return start, end


def register(cli: click.Group) -> None:
    for command in (rm_cmd, restore_cmd, trash_group, edit_cmd, write_cmd, view_cmd):
        cli.add_command(command)
