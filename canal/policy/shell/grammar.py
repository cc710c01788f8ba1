"""Program grammars: how each known program reads its options and what else it runs.

Loaded once from ``data/programs.yaml`` (hand-written: wrappers, options carrying commands) merged with
``data/options.json`` (long options generated from the sandbox image's ``--help`` texts). Validated with
pydantic at load; a broken table is a bug in Canal, so it raises.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict

DATA = Path(__file__).parent / "data"
Role = Literal["shell", "program", "command-argv", "code", "code-file", "ssh-option", "git-config",
               "git-config-env", "exec-action", "ex-command", "gdb-command", "deletes", "writes", "chdir",
               "login", "code-source"]
Custom = Literal["vim", "gdb", "parallel", "find", "xargs", "env", "socat", "sed", "gitconfig", "zip"]


class _CommandModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    skip: int = 0
    join: bool = False
    applet: bool = False
    shell_if_empty: bool = False
    join_with: tuple[str, ...] = ()
    argv_with: tuple[str, ...] = ()
    with_option: tuple[str, ...] = ()
    script_flags: tuple[str, ...] = ()
    shell_args: bool = False
    unknown_cwd: bool = False


class _ProgramModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    short_values: str = ""
    short_optional: str = ""
    long: tuple[str, ...] = ()
    exact_long: bool = False
    numeric: bool = False
    stop_at_operand: bool = False
    command: _CommandModel | None = None
    no_command: tuple[str, ...] = ()
    roles: dict[str, Role] = {}
    stdin_script: bool = False
    custom: Custom | None = None
    subcommands: dict[str, _ProgramModel] = {}


class _TableModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1]
    programs: dict[str, _ProgramModel]


@dataclass(frozen=True)
class CommandSpec:
    skip: int = 0
    join: bool = False
    applet: bool = False
    shell_if_empty: bool = False
    join_with: frozenset[str] = frozenset()
    argv_with: frozenset[str] = frozenset()
    with_option: frozenset[str] = frozenset()
    script_flags: frozenset[str] = frozenset()  # flock LOCK -c 'cmd': a flag where the command would be
    shell_args: bool = False  # su USER ARGS: ARGS go to the user's shell (runuser -u USER CMD: a command)
    unknown_cwd: bool = False  # the command starts in a folder the words do not name (chroot: the new /)


@dataclass(frozen=True)
class Grammar:
    name: str
    short_values: str = ""
    short_optional: str = ""
    long: dict[str, str] = field(default_factory=dict)  # name -> "" flag | "=" value | "?" optional value
    exact_long: bool = False
    numeric: bool = False
    no_short: bool = False
    plus_options: bool = False
    stop_at_operand: bool = False
    command: CommandSpec | None = None
    no_command: frozenset[str] = frozenset()
    roles: dict[str, Role] = field(default_factory=dict)
    stdin_script: bool = False
    custom: Custom | None = None
    subcommands: dict[str, Grammar] = field(default_factory=dict)


PLAIN = Grammar(name="")


def _longs(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        kind = item[-1] if item[-1] in "=?" else ""
        out[item.rstrip("=?")] = kind
    return out


def _build(name: str, model: _ProgramModel | None, generated: dict[str, Any]) -> Grammar:
    model = model or _ProgramModel()
    long = _longs(generated.get("long", []))
    long.update(_longs(model.long))
    long.update({k: "" if role == "deletes" else "=" for k, role in model.roles.items()
                 if len(k) > 1 and k not in long})
    subs = dict(generated.get("subcommands", {}))
    sub_models = model.subcommands
    subcommands = {s: _build(s, sub_models.get(s), subs.get(s, {}))
                   for s in sorted(set(subs) | set(sub_models))}
    command = model.command
    return Grammar(
        name=name,
        short_values="".join(sorted(set(generated.get("short_values", "")) | set(model.short_values) | {
            k for k, role in model.roles.items()
            if len(k) == 1 and role not in ("deletes", "login") and k not in model.short_optional})),
        short_optional=generated.get("short_optional", "") + model.short_optional,
        long=long, exact_long=model.exact_long, numeric=model.numeric, stop_at_operand=model.stop_at_operand,
        command=None if command is None else CommandSpec(
            skip=command.skip, join=command.join, applet=command.applet,
            shell_if_empty=command.shell_if_empty,
            join_with=frozenset(command.join_with), argv_with=frozenset(command.argv_with),
            with_option=frozenset(command.with_option), script_flags=frozenset(command.script_flags),
            shell_args=command.shell_args, unknown_cwd=command.unknown_cwd),
        no_command=frozenset(model.no_command), roles=dict(model.roles), stdin_script=model.stdin_script,
        custom=model.custom, subcommands=subcommands)


@lru_cache(maxsize=1)
def table() -> dict[str, Grammar]:
    text = (DATA / "programs.yaml").read_text(encoding="utf-8")
    hand = _TableModel.model_validate(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    generated: dict[str, Any] = json.loads((DATA / "options.json").read_text(encoding="utf-8"))["programs"]
    names = set(hand.programs) | set(generated)
    return {name: _build(name, hand.programs.get(name), generated.get(name, {})) for name in sorted(names)}


def grammar_of(program: str) -> Grammar | None:
    return table().get(program)
