"""What every command of one ``canal`` invocation shares, in one module (command modules never import
each other): the context object ``App`` with the project and its one ``Canal``, the pass decorator,
and the small rendering helpers.

``App.canal`` is built on first use and registered with ``ctx.with_resource`` on the root context, so
it is closed when the invocation ends, whatever happened. Commands use it through its methods, which
return serialisable results (pydantic models, dataclasses with ``to_json``).
"""

from __future__ import annotations

import functools
import getpass
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import click

from canal.core.display import visible
from canal.core.duration import InvalidDuration, parse_duration
from canal.core.errors import CanalError, register
from canal.runtime.settings.project import ProjectLocation, locate_project

if TYPE_CHECKING:
    from canal.runtime.api import Canal
    from canal.runtime.sandboxes.resources import Resources
    from canal.runtime.surface import Change
    from canal.runtime.trust import TrustStatus
    from canal.sandbox.images import BuildEvent

P = ParamSpec("P")
R = TypeVar("R")

JSON_HELP = "Print the result as JSON."
APPROVE_COMMAND = "canal config approve"


def current_user() -> str:
    """The OS user running ``canal`` (and who they were before sudo), as approval records name them."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid:{os.getuid()}"
    sudo = os.environ.get("SUDO_USER")
    return f"{sudo} (via sudo as {user})" if sudo and sudo != user else user


def terminal_flags() -> tuple[bool, bool]:
    return sys.stdin.isatty(), sys.stdout.isatty()


def actor() -> str:
    """Who the audit log names for what this invocation does (``CANAL_ACTOR``, default ``agent``)."""
    return os.environ.get("CANAL_ACTOR") or "agent"


@dataclass
class App:
    """One invocation of ``canal``: where it runs (``-C DIR`` or the working directory) and its Canal."""

    root: click.Context
    start: Path | None = None  # --project/-C
    resources: Resources | None = None  # the server's, given to its Canal (None: the Canal owns its own)
    _canal: Canal | None = field(default=None, repr=False)

    @cached_property
    def location(self) -> ProjectLocation:
        """The project and how it was found: the nearest canal.yaml upward from -C DIR (or the working
        directory), else the repository root (``canal.runtime.settings.project``)."""
        return locate_project(self.start)

    @property
    def project_dir(self) -> Path:
        return self.location.root

    @property
    def base(self) -> Path:
        """Relative paths given to file commands are relative to this: -C DIR, else the working directory."""
        return self.start.resolve() if self.start is not None else Path.cwd()

    def open(self, **options: Any) -> Canal:
        """Build this invocation's Canal with ``options`` (once; closed when the invocation ends)."""
        if self._canal is not None:
            msg = "this invocation's Canal is already open"
            raise RuntimeError(msg)
        from canal.runtime.api import Canal  # loads only for commands that need a project's Canal

        options.setdefault("actor", actor())
        options.setdefault("on_build", BuildProgress(verbose=False))
        options.setdefault("resources", self.resources)
        self._canal = self.root.with_resource(Canal(self.project_dir, **options))
        return self._canal

    @property
    def canal(self) -> Canal:
        return self._canal if self._canal is not None else self.open()

    def is_person(self) -> bool:
        """True when this command has a terminal on stdin and stdout: Canal's own file commands may then
        touch the settings files (canal.yaml still takes effect only once an approver approves it)."""
        return all(terminal_flags())


def app_of(ctx: click.Context) -> App:
    """The invocation's ``App``; a command invoked without the ``canal`` group (tests) gets a fresh one."""
    found = ctx.find_object(App)
    if found is not None:
        return found
    root = ctx.find_root()
    made = App(root)
    root.obj = made
    return made


def pass_app(fn: Callable[Concatenate[App, P], R]) -> Callable[P, R]:
    """Click decorator: the command's first argument is the invocation's ``App``."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return fn(app_of(click.get_current_context()), *args, **kwargs)

    return wrapper


# Words bash reads as syntax at the start of a command: quoted, they are only a program's name.
_RESERVED = frozenset({"!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac",
                       "fi", "for", "function", "if", "in", "select", "then", "time", "until", "while"})


def command_text(words: tuple[str, ...] | list[str]) -> str:
    """What ``canal run -- WORDS`` runs, as a command line for the session's shell.

    One word is a command line as typed (``canal run -- 'ls | wc -l'``). Several words are an exact
    argv, as ``docker exec`` and ``kubectl exec`` take them: each reaches the program whole, quoted where
    needed, so nothing in it is expanded, split or read as shell syntax. A first word that bash would
    read as an assignment (``FOO=1``) or a keyword (``if``) is quoted too: it names a program. Builtins
    such as ``cd`` still work and keep the session's state."""
    if len(words) == 1:
        return words[0]
    first, *rest = words
    head = shlex.quote(first)
    if head == first and ("=" in first or first in _RESERVED):
        head = f"'{first}'"
    return " ".join([head, *(shlex.quote(w) for w in rest)])


def json_option(help_text: str = JSON_HELP) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--json", "as_json", is_flag=True, help=help_text)


def since_threshold(spec: str, now: datetime) -> str:
    """A duration (``10m``, ``2h``, ``3d``, ``1w``: ``canal.core.duration``) or an ISO date or time (UTC), as
    a timestamp comparable with a record's ``ts``."""
    try:
        when = now - parse_duration(spec, "--since")
    except InvalidDuration as exc:
        try:
            when = datetime.fromisoformat(spec.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidDuration(exc.message, hint="canal audit show --since 1h   (or an ISO date: "
                                  "--since 2026-01-31)", details=exc.details) from None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def emit(as_json: bool, data: Any, text: str) -> None:
    """``data`` as JSON with --json, else ``text``; both on stdout."""
    if as_json:
        echo_json(data)
    else:
        click.echo(text)


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


class BuildProgress:
    """Renders image build events on stderr: one line per Dockerfile step, log lines only when verbose."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose

    def __call__(self, event: BuildEvent) -> None:
        if event.kind == "step":
            text = event.text if len(event.text) <= 100 else event.text[:97] + "..."
            click.echo(f"[{event.step}/{event.steps}] {text}", err=True)
        elif event.kind == "info":
            click.echo(f"canal: {event.text}", err=True)
        elif self.verbose:
            click.echo(f"    {event.text}", err=True)


_TRUST_STATES = {
    "defaults": "no canal.yaml: the default settings apply",
    "approved": "canal.yaml is approved and in force",
    "tightened": "canal.yaml changed, only tightening the approved settings: it applies at the next command",
    "unapproved": "canal.yaml (or a policy file) loosens the approved settings: nothing runs until a "
                  f"person approves it ({APPROVE_COMMAND})",
}


def _shown(value: object) -> str:
    """A setting's value as JSON (C0 controls escaped by JSON), with every other hidden character escaped."""
    return visible(json.dumps(value, ensure_ascii=False, sort_keys=True))


def describe_trust(status: TrustStatus) -> str:
    """The trust state of canal.yaml and each changed setting (LOOSENS / tightens), for a person."""
    lines = [f"{_TRUST_STATES[status.state]}", f"  content digest {status.snapshot.digest}"]
    if status.record is not None:
        lines.append(f"  last approved {status.record.digest} by {status.record.approved_by} "
                     f"({status.record.how})")
    for change in status.changes:
        mark = "LOOSENS " if change.loosens else "tightens"
        lines.append(f"  {mark} {visible(change.setting)}: {_shown(change.before)} -> {_shown(change.after)}")
    return "\n".join(lines)


def change_lines(changes: list[Change]) -> list[str]:
    """The lines a patch cannot carry: binary files, modes (setuid, setgid and sticky too: git's modes
    are only 100644 and 100755), symlinks, type changes, deletions. Names are shown escaped."""
    out = []
    for c in changes:
        if c.binary:
            out.append(f"Binary file {c.path} {c.kind}")
        elif c.kind in ("mode", "symlink", "type"):
            out.append(f"{c.kind} {c.path}: {c.detail}")
        elif c.kind == "deleted":
            out.append(f"deleted {c.path} ({c.detail})")
        elif c.kind in ("added", "modified") and (not c.detail.startswith("file") or _SPECIAL.search(
                c.detail)):
            out.append(f"{c.kind} {c.path} ({c.detail})")
    return [visible(line) for line in out]


# a mode git's patch cannot say: setuid, setgid, sticky
_SPECIAL = re.compile(r"(?:mode |-> )[1-7][0-7]{3}\b")


FRONT_ENDS = "canal.front_ends"  # the package metadata names each front end the CLI serves


FRONT_END_MISSING = register(CanalError, "FRONT_END_MISSING", """
    This installation of Canal has no such front end (its package metadata names none).
    """)


def front_end(name: str) -> Callable[..., Any]:
    """The serving function the installed package registers for front end ``name``."""
    found = entry_points(group=FRONT_ENDS, name=name)
    if not found:
        msg = f"this installation of Canal has no {name} front end (no {FRONT_ENDS} entry point {name!r})"
        raise FRONT_END_MISSING(msg, hint="reinstall Canal (pip install canal-sandbox), then retry")
    serve: Callable[..., Any] = next(iter(found)).load()
    return serve
