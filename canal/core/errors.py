"""The one error root of Canal, the registry of error codes, and the process exit codes (public API,
docs/errors.md; a test pins them).

Every error Canal raises is a ``CanalError``: a stable UPPER_SNAKE ``code`` and an ``exit_code``; the
``message`` (what happened, in context), a ``hint`` (what to do, in words that hold for every reader) and
``details`` (the same as data, for ``--json``). Each package keeps a few family classes under this root
(``SandboxError``, ``PolicyError``, ``WorkflowError``, ``AuditError``...), and its codes as registered
data (``register``): ``raise SESSION_FAILED("...")`` raises a ``SandboxError`` whose code is
``SESSION_FAILED``. A class of its own stays only for an error that code catches by type. The front ends
catch ``CanalError`` and render it for their reader.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from canal.core.next import NextAction


class ExitCode:
    """Exit codes of ``canal`` itself. A command's own exit status passes through unchanged."""

    USAGE = 2  # bad arguments, invalid config or input
    CONFIRMATION_REQUIRED = 120
    POLICY_DENIED = 121
    APPROVAL_INVALID = 122  # token expired, reused, forged or for another command
    TIMEOUT = 124  # hard or idle timeout (GNU timeout's code)
    CANAL_ERROR = 125  # Canal or the engine failed (docker run's code)
    INTERRUPTED = 130  # 128 + SIGINT (Ctrl-C); SIGTERM gives 143
    KILLED = 137  # OOM-killed or killed (128 + SIGKILL)


# What each exit code of `canal` means: `canal help CMD --full` and docs/errors.md render this one list.
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (ExitCode.USAGE, "bad arguments, invalid canal.yaml or input"),
    (ExitCode.CONFIRMATION_REQUIRED, "confirmation required: nothing ran; re-run with --confirm TOKEN (or a "
                                     "person approves first)"),
    (ExitCode.POLICY_DENIED, "denied by the policy: nothing ran"),
    (ExitCode.APPROVAL_INVALID, "approval token expired, reused, forged or for another command"),
    (ExitCode.TIMEOUT, "killed by the hard or idle timeout"),
    (ExitCode.CANAL_ERROR, "Canal or the Docker engine failed"),
    (ExitCode.INTERRUPTED, "interrupted: Ctrl-C (143: SIGTERM); the command's processes in the sandbox "
                           "were killed"),
    (ExitCode.KILLED, "killed (out of memory, or the sandbox killed it)"),
)


class CanalError(Exception):
    """Canal failed, or refused the request; the message says why."""

    code: str = "CANAL_ERROR"  # a class's own, or the registered code it was raised as (``ErrorCode``)
    exit_code: int = ExitCode.CANAL_ERROR

    def __init__(self, message: str, *, hint: str = "", next: NextAction | Sequence[NextAction] = (),
                 details: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.next: tuple[NextAction, ...] = (next,) if isinstance(next, NextAction) else tuple(next)
        self.details: dict[str, Any] = dict(details or {})


F = TypeVar("F", bound=CanalError)


@dataclass(frozen=True, eq=False)
class ErrorCode(Generic[F]):
    """One registered code: raised as an error of its family class, with its own code and exit status."""

    family: type[F]
    code: str
    summary: str  # what it means, for docs/errors.md
    exit_code: int
    where: str  # the module that registered it

    def __call__(self, message: str, *, hint: str = "", next: NextAction | Sequence[NextAction] = (),
                 details: Mapping[str, object] | None = None) -> F:
        error = self.family(message, hint=hint, next=next, details=details)
        error.code, error.exit_code = self.code, self.exit_code
        return error

    def matches(self, error: BaseException) -> bool:
        return isinstance(error, self.family) and error.code == self.code


REGISTRY: dict[str, ErrorCode[Any]] = {}


def _paragraphs(text: str) -> str:
    """A summary's paragraphs, each on one line (``inspect`` would cost the thin client its start-up)."""
    return "\n\n".join(" ".join(part.split()) for part in text.strip().split("\n\n"))


def register(family: type[F], code: str, summary: str, *, exit_code: int | None = None) -> ErrorCode[F]:
    """A new code of ``family`` (its exit status unless ``exit_code``); each code is registered once."""
    where = str(sys._getframe(1).f_globals.get("__name__", ""))
    known = REGISTRY.get(code)
    if known is not None and (known.where, known.family.__name__) != (where, family.__name__):
        msg = f"error code {code} is registered twice: {known.where} and {where}"
        raise ValueError(msg)
    entry = ErrorCode(family, code, _paragraphs(summary),
                      family.exit_code if exit_code is None else exit_code, where)
    REGISTRY[code] = entry
    return entry


POLICY_DENIED = register(CanalError, "POLICY_DENIED", """
    The policy refuses the command and it cannot be confirmed. Nothing was run (a result, not raised).
    """, exit_code=ExitCode.POLICY_DENIED)


class ConfirmationRequired(CanalError):
    """The policy wants the command confirmed: nothing was run; re-run it with the token it gave."""

    code = "CONFIRMATION_REQUIRED"
    exit_code = ExitCode.CONFIRMATION_REQUIRED


class SettingRefused(ValueError):
    """A setting's value refused with a code of its own rather than ``CONFIG_INVALID`` (a validator raises
    it; loading the settings turns it into the ``CanalError`` of that code, naming the line)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
