"""The approver's side of the approval door (``canal approve --for USER``, ``canal config approve --for``)."""

from __future__ import annotations

import pwd
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from canal.cli.shared import terminal_flags
from canal.core.display import visible
from canal.core.errors import REGISTRY, CanalError
from canal.runtime.admin.person import APPROVAL_DOOR_UNREACHABLE, ApprovalError, sign


def remote_error(error: dict[str, Any]) -> CanalError:
    """The door's error as the same code (so the same exit code and class) on this side: a registered
    code of the approvals, or one of their classes, else the family's own."""
    def walk(cls: type[ApprovalError]) -> list[type[ApprovalError]]:
        return [cls, *(sub for child in cls.__subclasses__() for sub in walk(child))]

    code = str(error.get("code") or "")
    registered = REGISTRY.get(code)
    make: Callable[..., CanalError] = next((c for c in walk(ApprovalError) if c.code == code), ApprovalError)
    if registered is not None and issubclass(registered.family, ApprovalError):
        make = registered
    return make(str(error.get("message") or "the approval door refused"), hint=str(error.get("hint") or ""),
                details=error.get("details") or {})


def uid_of(user: str) -> int:
    try:
        return int(user) if user.isdigit() else pwd.getpwnam(user).pw_uid
    except KeyError:
        msg = f"there is no OS user {user!r} on this host"
        hint = "--for names the OS user the agent's Canal runs as"
        raise APPROVAL_DOOR_UNREACHABLE(msg, hint=hint) from None


def knock(user: str, request: dict[str, Any]) -> dict[str, Any]:
    """One request to the approval door of ``user``'s Canal server."""
    from canal.client.door import knock as door_knock

    try:
        answer = door_knock(uid_of(user), request)
    except (ConnectionError, PermissionError, OSError) as exc:
        msg = f"cannot reach the Canal server of {user}: {exc}"
        hint = f"the agent's Canal server runs while {user} uses canal; try again once it ran a command"
        raise APPROVAL_DOOR_UNREACHABLE(msg, hint=hint) from exc
    if "error" in answer:
        raise remote_error(answer["error"])
    return answer


def read_signature(ssh_key: Path | None, signature: Path | None, message: bytes) -> str | None:
    if signature is not None:
        return signature.read_text()
    if ssh_key is not None:
        return sign(message, ssh_key)
    return None


def confirm_at_terminal(text: str, yes: bool) -> None:
    """A question for the person's own sake (a terminal proves nothing; the proof is the uid or key).

    Asked at the terminal, or read from stdin when an answer is piped: only y or yes goes on, anything
    else declines. With no terminal and nothing piped there is nobody to ask: an error, unless --yes."""
    if yes:
        return
    if terminal_flags()[0]:
        answer = "y" if click.confirm(text, default=False, err=True) else "n"
    else:
        line = sys.stdin.readline()
        if not line:
            msg = (f"{text} was not answered: stdin is no terminal and nothing was piped; answer at a "
                   "terminal, pipe the answer (echo y | canal ...), or pass --yes")
            raise click.UsageError(msg)
        answer = line.strip()
        click.echo(f"{text} [y/N]: {visible(answer)}", err=True)
    if answer.lower() not in ("y", "yes"):
        msg = f"not approved: the answer was '{visible(answer)}' (only y or yes goes on); nothing was decided"
        raise click.ClickException(msg)
