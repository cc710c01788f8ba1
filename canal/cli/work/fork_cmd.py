"""``canal fork / changes / apply / discard``: autonomous work on a copy-on-write view of the project.

A fork is a sandbox whose /workspace is a copy of the project at one moment (copy-on-write), under the
autonomous profile: no confirmations, deny rules kept. Its changes come back as a patch; ``apply``
carries them to the real project through the confirmation flow, after a checkpoint.
"""

from __future__ import annotations

import click

from canal.cli.shared import App, change_lines, echo_json, json_option, pass_app
from canal.core.display import visible


@click.command("fork")
@click.argument("name")
@click.option("--from", "from_id", metavar="CHECKPOINT",
              help="Fork the project as it was at this checkpoint.")
@json_option()
@pass_app
def fork_cmd(app: App, name: str, from_id: str | None, as_json: bool) -> None:
    """Start sandbox NAME on a copy-on-write view of the project (now, or at --from CHECKPOINT).

    The real project is not mounted in it; commands there need no confirmation (deny rules still
    apply). Example: canal fork try-upgrade
    """
    fork = app.canal.fork(name, from_checkpoint=from_id)
    if as_json:
        echo_json({"status": "ok", **fork.model_dump(mode="json", exclude={"hmac", "key_id"})})
        return
    if fork.note:
        click.echo(f"note: fork {name} is {fork.note}", err=True)
    if fork.ignored == "copied":
        size = fork.ignored_bytes // 1_000_000
        click.echo(f"note: fork {name} has a copy of the {fork.ignored_files} file(s) no checkpoint holds "
                   f"(.gitignore'd folders, files over the size cap): {size} MB on the state disk until it "
                   "is discarded", err=True)
    click.echo(f"fork {name} is up, from {fork.base} | run there: canal run --sandbox {name} -- CMD | "
               f"review: canal changes {name} | apply: canal apply {name} | drop: canal discard {name}")


@click.command("changes")
@click.argument("name")
@click.option("--patch", "as_patch", is_flag=True, help="Print only the git-apply-compatible patch.")
@json_option()
@pass_app
def changes_cmd(app: App, name: str, as_patch: bool, as_json: bool) -> None:
    """Show what fork NAME changed: a unified diff, then binary, mode, symlink and deletion lines.

    Example: canal changes try-upgrade
    """
    result = app.canal.changes(name)
    if as_json:
        echo_json({"status": "ok", **result.model_dump(mode="json")})
        return
    if as_patch:
        click.echo(result.patch, nl=False)
        return
    if result.patch:
        click.echo(result.patch, nl=False)
    for line in change_lines(result.changes):
        click.echo(line)
    for item in result.not_carried:
        click.echo(f"not carried by apply: {visible(item.path)} ({item.reason})")
    click.echo(f"[{len(result.changes)} change(s) in fork {name} since {result.base} | "
               f"apply: canal apply {name} | drop: canal discard {name}]")


@click.command("apply")
@click.argument("name")
@click.argument("paths", nargs=-1)
@click.option("--confirm", "confirm", metavar="TOKEN", help="The token from CONFIRMATION_REQUIRED.")
@json_option()
@pass_app
def apply_cmd(app: App, name: str, paths: tuple[str, ...], confirm: str | None, as_json: bool) -> None:
    """Make the real project match fork NAME (only PATHS when given), after a person confirms.

    The first call lists the files and asks for confirmation (nothing is applied); the real project
    is checkpointed before anything is written, and paths changed on both sides since the fork are
    refused as conflicts. Changes to canal.yaml, policy files, .git/ or .gitattributes apply only when a
    person runs this (from a terminal). Example: canal apply try-upgrade src/
    """
    result = app.canal.apply(name, paths, confirm=confirm, person=app.is_person())
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    if not result.applied:
        click.echo(f"fork {name} has no change to apply")
        return
    for c in result.applied:
        click.echo(f"{c.kind:<9} {visible(c.path)}")
    click.echo(f"applied {len(result.applied)} change(s) from fork {name} | undo the apply: "
               f"canal undo {result.checkpoint}")
    for item in result.left_alone:
        click.echo(f"left alone: {visible(item.path)} ({item.reason})")
    for path in result.stripped:
        click.echo(f"applied without its setuid/setgid bits (Canal never writes a privileged file): "
                   f"{visible(path)}")


@click.command("discard")
@click.argument("name")
@json_option()
@pass_app
def discard_cmd(app: App, name: str, as_json: bool) -> None:
    """Remove fork NAME: its sandbox and its workspace. The real project is not touched.

    Example: canal discard try-upgrade
    """
    fork = app.canal.discard(name)
    if as_json:
        echo_json({"status": "ok", "discarded": fork.name})
        return
    click.echo(f"fork {name} discarded (it started from {fork.base})")


def register(group: click.Group) -> None:
    for command in (fork_cmd, changes_cmd, apply_cmd, discard_cmd):
        group.add_command(command)
