"""What an option's value runs: a shell command string, opaque code, or nothing.

Each role of ``data/programs.yaml`` has one interpreter here. The result is a ``Payload``: shell scripts
the parser decides as commands of their own, a code marker for code it cannot see into, and the files
the option makes the program write or delete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from canal.policy.shell.gitconfig import config_key_kind
from canal.policy.shell.model import Word


@dataclass(frozen=True)
class Payload:
    scripts: tuple[Word, ...] = ()
    code: str = ""  # "" | inline (code the parser cannot read) | embedded (a command hidden from the parser)
    writes: tuple[str, ...] = ()
    deletes: bool = False
    dynamic: bool = False  # the program appends arguments to the command (sort --compress-program PROG)
    cwd: str | None = None  # where the command it runs starts: None unchanged, "" unknown (a home), or a path


NOTHING = Payload()
_SSH_COMMAND_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
_SSH_FILE_KEYS = frozenset({"include"})
_EX_HARMLESS = re.compile(r"^\s*:?\s*(q|qa|q!|qa!|wq|x|set\s[\w =+-]*|syntax\s+\w+|noh\w*)\s*$")
_GDB_SHELL = re.compile(r"^\s*(?:shell\s+|!)(?P<cmd>.*)$", re.S)
_GDB_PIPE = re.compile(r"^\s*(?:pipe|\|)\s.*?\|\s*(?P<cmd>.*)$", re.S)


def _shell(value: Word) -> Payload:
    return Payload(scripts=(value,))


def _opaque(value: Word) -> Payload:
    return Payload(code="embedded" if value.text.strip() or not value.literal else "")


def ssh_option(value: Word) -> Payload:
    """``-o ProxyCommand=cmd`` or ``-o 'ProxyCommand cmd'``."""
    if not value.literal:
        return Payload(code="embedded")
    parts = re.match(r"^\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*)$", value.text, re.S)
    if parts is None:
        return NOTHING
    key, rest = parts.group(1).lower(), parts.group(2)
    if key in _SSH_COMMAND_KEYS:
        return _shell(Word(rest))
    return Payload(code="inline") if key in _SSH_FILE_KEYS else NOTHING


def git_config(value: Word) -> Payload:
    """``git -c key=value``: a code-executing key's value is a command (or opaque)."""
    key, eq, rest = value.text.partition("=")
    return git_config_value(key, Word(rest, literal=value.literal) if eq else None, literal_key=value.literal)


def git_config_value(key: str, value: Word | None, *, literal_key: bool = True) -> Payload:
    if not literal_key:
        return Payload(code="embedded")
    kind = config_key_kind(key)
    if kind == "":
        return NOTHING
    if value is None or not value.literal:
        return Payload(code="embedded")
    text = value.text
    if kind == "alias":
        return _shell(Word(text[1:])) if text.startswith("!") else NOTHING
    if kind == "helper":
        return _shell(Word(text[1:])) if text.startswith("!") else Payload(code="embedded")
    if kind == "shell":
        return _shell(value)
    return Payload(code="embedded")  # a program, hook folder or included file: the code is elsewhere


def git_config_env(value: Word) -> Payload:
    key = value.text.partition("=")[0]
    return Payload(code="embedded") if not value.literal or config_key_kind(key) else NOTHING


def exec_action(value: Word) -> Payload:
    """tar's ``--checkpoint-action=exec=CMD`` (several actions may be given, comma-separated)."""
    if not value.literal:
        return Payload(code="embedded")
    _, found, cmd = value.text.partition("exec=")
    return _shell(Word(cmd)) if found else NOTHING


def ex_command(value: Word) -> Payload:
    if not value.literal:
        return Payload(code="embedded")
    text = value.text.lstrip(" :")
    if text.startswith("!"):
        return _shell(Word(text[1:]))
    return NOTHING if _EX_HARMLESS.match(text) else Payload(code="inline")


def gdb_command(value: Word) -> Payload:
    if not value.literal:
        return Payload(code="embedded")
    for pattern in (_GDB_SHELL, _GDB_PIPE):
        found = pattern.match(value.text)
        if found is not None:
            return _shell(Word(found.group("cmd")))
    return Payload(code="inline")


def payload(role: str, value: Word | None) -> Payload:
    """The payload of one option with ``role`` (its value may be missing: the option is a flag)."""
    if role == "deletes":
        return Payload(deletes=True)
    if role == "login":
        return Payload(cwd="")
    if role == "chdir":  # an option without its value (nsenter -w) moves to a folder known at run time
        return Payload(cwd=value.text if value is not None and value.literal else "")
    if value is None:
        return NOTHING
    if role == "writes":
        return Payload(writes=(value.text,)) if value.literal else Payload(code="embedded")
    if role == "shell":
        return _shell(value)
    if role == "program":
        return Payload(scripts=(value,), dynamic=True)
    if role in ("code", "code-file"):
        return Payload(code="inline") if role == "code" else NOTHING
    if role == "code-source":
        return Payload(code="embedded")
    interpret = {"ssh-option": ssh_option, "git-config": git_config, "git-config-env": git_config_env,
                 "exec-action": exec_action, "ex-command": ex_command, "gdb-command": gdb_command}.get(role)
    return interpret(value) if interpret is not None else _opaque(value)
