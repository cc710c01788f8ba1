"""The ``canal`` command line that performs a next action: what a person types in a terminal.

Both front ends need it: the CLI says every next action this way, and MCP says so for what only a
person can do (``ask the user to run `canal approve c_1` in a terminal``). Values are shell-quoted;
placeholders (``NAME``, ``<string>``) are left as they are, to be filled in.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from canal.core.next import Kind, NextAction

_PLACEHOLDER = re.compile(r"^(<[^<>]*>|[A-Z][A-Z_]*|\.\.\.)$")

Args = Mapping[str, Any]


def quote(value: object) -> str:
    text = str(value)
    return text if _PLACEHOLDER.match(text) else shlex.quote(text)


_PLAIN_WORDS = re.compile(r"[\w@%+=:,./-]+(?: [\w@%+=:,./-]+)*")  # shlex.quote leaves these as they are


def shell_words(command: str) -> str:
    """A command as typed words when that round-trips exactly, else as one quoted argument (linear)."""
    return command if _PLAIN_WORDS.fullmatch(command) else shlex.quote(command)


def _opt(flag: str, value: object) -> str:
    if value is None or value is False:
        return ""
    return f" {flag}" if value is True else f" {flag} {quote(value)}"


def _json(value: object) -> str:
    return shlex.quote(json.dumps(value, ensure_ascii=False))


def _sandbox(a: Args) -> str:
    name = a.get("sandbox")
    return "" if name in (None, "default") else f" --sandbox {quote(name)}"


def _run(a: Args) -> str:
    if a.get("call"):  # a tool call or a workflow step: not a shell command to type again
        return f"the same call again with --confirm {quote(a.get('token', 'TOKEN'))}"
    command = a.get("command")
    what = "<the same command>" if a.get("secret") or command is None else shell_words(str(command))
    confirm = _opt("--confirm", a.get("token"))
    verb = "task start" if a.get("task") else "run"  # a refused task start starts again with its token
    options = a.get("task_options") or {}  # the same task: its name, timeout and forwards again
    flags = _opt("--name", options.get("name")) + _opt("--timeout", options.get("timeout")) + "".join(
        _opt("--forward", f) for f in options.get("forward") or ())
    return f"canal {verb}{_sandbox(a)}{flags}{confirm} -- {what}"


def _advance(a: Args) -> str:
    gate = f" --gate-data {_json(a['gate'])}" if a.get("gate") else ""
    run = quote(a.get("run_id", "RUN"))
    flags = _opt("--confirm", a.get("confirm")) + _opt("--retry", a.get("retry"))
    return f"canal workflow advance {run}{gate}{flags}"


def _tool_call(a: Args) -> str:
    confirm = _opt("--confirm", a.get("token"))
    return f"canal tool call {quote(a['name'])} --args {_json(a.get('args', {}))}{confirm}"


def _positional(*names: str) -> Callable[[Args], str]:
    return lambda a: "".join(f" {quote(a[n])}" for n in names if a.get(n) is not None)


_BASE: dict[str, str] = {"workflow.add_step": "workflow add-step", "fork.changes": "changes",
                         "fork.apply": "apply", "fork.discard": "discard", "fork.start": "fork",
                         "remove": "rm",
                         "port_forward": "port-forward"}

_TAILS: dict[Kind, Callable[[Args], str]] = {
    "view": lambda a: _positional("path")(a) + _opt("--range", a.get("range")),
    "edit": lambda a: f" {quote(a['path'])} --old TEXT --new TEXT{_opt('--all', a.get('all'))}",
    "write": lambda a: f" {quote(a['path'])} < FILE",
    "remove": lambda a: _opt("-r", a.get("recursive")) + _positional("path")(a),
    "restore": lambda a: (f" {quote(a['trash_id'])}{_opt('--to', a.get('to'))}"
                          f"{_opt('--force', a.get('force'))}"),
    "workflow.start": _positional("name"),
    "workflow.current": _positional("run_id"),
    "workflow.show": _positional("run_id"),
    "workflow.abort": _positional("run_id"),
    "workflow.init": _positional("name"),
    "workflow.add_step": lambda a: (_positional("name")(a) + _opt("--id", a.get("id", "ID"))
                                    + _opt("--type", a.get("type", "TYPE"))),
    "workflow.validate": _positional("name"),
    "tool.meta": _positional("name"),
    "approve": lambda a: (_positional("token")(a) + _opt("--for", a.get("for_user"))
                          + _opt("--ssh-key", a.get("ssh_key"))),
    "config.approve": lambda a: _opt("--for", a.get("for_user")) + _opt("--ssh-key", a.get("ssh_key")),
    "undo": _positional("checkpoint"),
    "checkpoints": lambda a: _opt("--prune", a.get("prune")) + _opt("--before", a.get("before")),
    "image.build": lambda a: _opt("--egress", a.get("egress")),
    "down": _positional("sandbox"),
    "fork.start": lambda a: _positional("name")(a) + _opt("--from", a.get("from")),
    "audit.checkpoint": lambda a: " > FILE",
    "server.stop": lambda a: _opt("--all", a.get("all")),
    "egress.log": lambda a: _opt("--denied", a.get("denied")),
    "diff": _positional("checkpoint"),
    "trash.purge": lambda a: _opt("--older-than", a.get("older_than", "30d")),
    "policy.check": lambda a: (_opt("--cwd", a.get("cwd"))
                               + "".join(_opt("--session-env", v) for v in a.get("session_env") or ())
                               + _opt("--unattended", a.get("unattended"))
                               + f" -- {shell_words(str(a.get('command', 'CMD')))}"),
    "policy.test": lambda a: f" {quote(a.get('file', 'FILE'))}",
    "key.retire": _positional("key_id"),
    "audit.show": lambda a: _opt("--since", a.get("since")) + _opt("--json", a.get("json")),
    "audit.verify": lambda a: _opt("--checkpoint", a.get("checkpoint")),
    "fork.changes": _positional("name"),
    "fork.apply": lambda a: (_positional("name")(a) + "".join(f" {quote(p)}" for p in a.get("paths", ()))
                             + _opt("--confirm", a.get("token"))),
    "fork.discard": _positional("name"),
    "up": _positional("sandbox"),
    "task.start": lambda a: (_opt("--name", a.get("name"))
                             + f" -- {shell_words(str(a.get('command', 'CMD')))}"),
    "task.show": lambda a: f" {quote(a.get('task', 'ID'))}",
    "task.logs": lambda a: f" {quote(a.get('task', 'ID'))}{_opt('-f', a.get('follow'))}",
    "task.wait": lambda a: f" {quote(a.get('task', 'ID'))}{_opt('--timeout', a.get('timeout'))}",
    "task.cancel": lambda a: f" {quote(a.get('task', 'ID'))}",
    "port_forward": lambda a: (f" {quote(a['sandbox'])}" if a.get("sandbox") not in (None, "default") else "")
                              + f" {quote(a.get('spec', 'HOSTPORT:PORT'))}",
}


def command_line(action: NextAction) -> str:
    """``canal ...`` for ``action`` (``confirm`` and ``retry`` name the run that was refused, if known)."""
    a = action.args
    if action.kind in ("run", "confirm"):
        return _run(a)
    if action.kind == "retry":
        return "the same command again" + (" without --confirm, for a fresh token" if a.get("fresh_token")
                                            else "")
    if action.kind == "workflow.advance":
        return _advance(a)
    if action.kind == "tool.call":
        return _tool_call(a)
    base = _BASE.get(action.kind, action.kind.replace(".", " "))
    tail = _TAILS.get(action.kind)
    where = f" -C {quote(a['project'])}" if a.get("project") else ""
    return f"canal{where} {base}{tail(a) if tail else ''}"


def ways_text(token: str, ways: object) -> str:
    """A person's commands for each way in ``approve_ways`` data (both front ends quote them)."""
    if not isinstance(ways, dict):  # not told this project's approvers: the general way
        return (f"an approver named in canal.yaml decides it (canal approve {token} --for AGENT_USER as "
                "their own OS user, or --ssh-key KEY)")
    data = ways
    methods = data.get("methods") or []
    if not methods:
        return (f"no approver is configured, so nobody can approve {token}: add approvals.approvers to "
                "canal.yaml (docs/approvals.md); a person approves that change")
    where = f"canal -C {data.get('project')} approve {token}"
    said = {"os-user": f"as their own OS user: {where} --for {data.get('agent_user')}",
            "ssh": f"with their SSH key: {where} --ssh-key KEY",
            "passkey": (f"with their passkey in the web console (canal -C {data.get('project')} console, "
                        f"then http://localhost:{data.get('console_port')}/approvals)")}
    return "an approver decides it, " + "; or ".join(said[m] for m in methods if m in said)
