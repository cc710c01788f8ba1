"""Errors of the runtime (the composition root) and the one shape every Canal error is rendered in.

Agent-facing shape::

    CONFIRMATION_REQUIRED
    rm -rf build/ matches rule rm-recursive (recursive delete). Nothing was run.
    Next: canal run --confirm c_7f3a9 -- rm -rf build/

Process exit codes are public API (docs/errors.md); a test pins them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, ClassVar, Protocol, runtime_checkable

Redact = Callable[[str], str]


class ExitCode:
    """Exit codes of ``canal`` itself. A command's own exit status passes through unchanged."""

    USAGE = 2  # bad arguments, invalid config or input
    CONFIRMATION_REQUIRED = 120
    POLICY_DENIED = 121
    APPROVAL_INVALID = 122  # token expired, reused, forged or for another command
    TIMEOUT = 124  # hard or idle timeout (GNU timeout's code)
    CANAL_ERROR = 125  # Canal or the engine failed (docker run's code)
    KILLED = 137  # OOM-killed or killed (128 + SIGKILL)


@runtime_checkable
class CanalErrorLike(Protocol):
    """What every package's error root provides; the CLI and MCP boundaries render these."""

    code: ClassVar[str]
    exit_code: ClassVar[int]
    message: str
    hint: str
    details: dict[str, Any]


class RuntimeLayerError(Exception):
    code: ClassVar[str] = "CANAL_ERROR"
    exit_code: ClassVar[int] = ExitCode.CANAL_ERROR

    def __init__(self, message: str, *, hint: str = "", details: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = dict(details or {})


class ConfigError(RuntimeLayerError):
    code = "CONFIG_INVALID"
    exit_code = ExitCode.USAGE


class StateDirError(RuntimeLayerError):
    code = "STATE_DIR_UNUSABLE"


def is_canal_error(exc: BaseException) -> bool:
    return isinstance(exc, CanalErrorLike) and isinstance(getattr(exc, "code", None), str)


def format_error(code: str, message: str, hint: str = "") -> str:
    """The agent-facing text: CODE, what happened, then the next command."""
    lines = [code, message]
    if hint:
        lines.append(f"Next: {hint}")
    return "\n".join(lines)


@cache
def boundary_redactor() -> Redact:
    """The redactor of the error boundary when the front end has none with the host's keys: the same
    detector, placeholders stable within this process."""
    from canal.runtime.redact import Redactor  # lazy: the detector's rules load only on an error

    return Redactor()


def render_error(exc: CanalErrorLike, redact: Redact | None = None) -> str:
    """Every error a front end shows passes here: message and ``Next:`` hint go through the redactor,
    since either may quote what the agent typed (a command, a path, a token)."""
    return (redact or boundary_redactor())(format_error(exc.code, exc.message, exc.hint))


def error_json(exc: CanalErrorLike, redact: Redact | None = None) -> dict[str, Any]:
    clean = redact or boundary_redactor()
    return {"status": "error", "code": exc.code, "message": clean(exc.message), "hint": clean(exc.hint),
            "details": redact_strings(exc.details, clean)}


def redact_strings(value: Any, redact: Redact) -> Any:
    """``value`` with every string in it (keys of mappings kept) passed through ``redact``."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_strings(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_strings(v, redact) for v in value]
    return value
