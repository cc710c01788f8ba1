"""``canal server``: the same status, stop and logs as the thin client's, for in-process runs."""

from __future__ import annotations

import click

from canal.cli.server_admin import server_command


@click.command("server", context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
               add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def server(args: tuple[str, ...]) -> None:
    """The per-user Canal server: status, stop, logs (it starts by itself at the first call).

    \b
    Example: canal server status
    """
    raise SystemExit(server_command(list(args)))


def register(cli: click.Group) -> None:
    cli.add_command(server)
