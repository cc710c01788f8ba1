"""Errors of the application layer, and the one shape every Canal error is rendered in.

Agent-facing shape::

    CONFIRMATION_REQUIRED
    rm -rf build/ matches rule rm-recursive (recursive delete). Nothing was run.
    Next: canal run --confirm c_7f3a9 -- rm -rf build/
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from canal.core.errors import CanalError, ExitCode, register
from canal.core.next import Say, describe, say_all

Redact = Callable[[str], str]


class ConfigError(CanalError):
    code = "CONFIG_INVALID"
    exit_code = ExitCode.USAGE


PROFILE_LOOSER_THAN_PROJECT = register(ConfigError, "PROFILE_LOOSER_THAN_PROJECT", """
    A profile override (``canal mcp --profile``) may make the project's policy stricter, never looser.
    """)

STATE_DIR_UNUSABLE = register(CanalError, "STATE_DIR_UNUSABLE",
                              "The state folder Canal keeps for the project cannot be used.")

SANDBOX_LIMIT_REACHED = register(CanalError, "SANDBOX_LIMIT_REACHED", """
    The project already runs as many sandboxes as canal.yaml's limits.sandboxes allows; nothing was
    started.
    """)

API_CALL_INVALID = register(CanalError, "API_CALL_INVALID", """
    A call of the Python API through the server that its signature does not allow (an unknown call or
    argument, a value of the wrong type): refused before anything ran.
    """, exit_code=ExitCode.USAGE)

INTERNAL_ERROR = register(CanalError, "INTERNAL_ERROR", """
    Canal failed in a way it did not expect (a bug); the server's log has the traceback.
    """)


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
    from canal.host.redact import Redactor  # lazy: the detector's rules load only on an error

    return Redactor()


def next_sentence(exc: CanalError, say: Say = describe) -> str:
    """What to do next, in the front end's words: the error's hint, then its actions."""
    return say_all(exc.next, say, lead=exc.hint)


def render_error(exc: CanalError, redact: Redact | None = None, say: Say = describe) -> str:
    """Every error a front end shows passes here, with that front end's words for the next actions.
    Message and ``Next:`` go through the redactor: either may quote what the agent typed."""
    return (redact or boundary_redactor())(format_error(exc.code, exc.message, next_sentence(exc, say)))


def error_json(exc: CanalError, redact: Redact | None = None, say: Say = describe) -> dict[str, Any]:
    """``--json``'s error: ``hint`` is the worded next step, ``next`` the same actions as data."""
    clean = redact or boundary_redactor()
    data = {"status": "error", "code": exc.code, "message": clean(exc.message),
            "hint": clean(next_sentence(exc, say)),
            "next": redact_strings([a.to_json() for a in exc.next], clean),
            "details": redact_strings(exc.details, clean)}
    asked = exc.details.get("confirmation")
    if isinstance(asked, Mapping):  # the one confirmation shape (runtime.run.result.ConfirmationView)
        rerun = next((w for w in (say(a) for a in exc.next) if w), "")
        data["confirmation"] = redact_strings({**asked, "rerun": rerun}, clean)
    return data


def redact_strings(value: Any, redact: Redact) -> Any:
    """``value`` with every string in it (keys of mappings kept) passed through ``redact``."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_strings(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_strings(v, redact) for v in value]
    return value

