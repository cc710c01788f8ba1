"""The lazy command table names every command each CLI module registers, and nothing else."""

from __future__ import annotations

import importlib

import click

from canal.cli.main import COMMAND_MODULES, COMMANDS, cli, load_command


def test_command_table_matches_what_modules_register() -> None:
    registered: dict[str, str] = {}
    for module in COMMAND_MODULES:
        scratch = click.Group()
        importlib.import_module(module).register(scratch)
        registered.update(dict.fromkeys(scratch.commands, module))
    assert registered == COMMANDS


def test_every_command_loads_and_has_help() -> None:
    for name in COMMANDS:
        command = load_command(name)
        assert command is not None, name
        assert command.get_short_help_str(), name
    assert load_command("nope") is None
    assert cli.list_commands(click.Context(cli)) == sorted(COMMANDS)
