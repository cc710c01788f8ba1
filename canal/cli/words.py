"""The CLI's words for next actions: the ``canal`` command line to type (``canal.runtime.run.commands``),
and the CLI's own phrasing for a confirmation."""

from __future__ import annotations

from typing import Any

from canal.core.errors import CanalError
from canal.core.next import NextAction, say_all
from canal.runtime.errors import Redact, error_json, render_error
from canal.runtime.run.commands import command_line, ways_text


class CliWords:
    """The CLI's words: each action as the command line to type."""

    then = "then run"

    def __call__(self, action: NextAction) -> str:
        return _say(action)


def _say(action: NextAction) -> str:
    if action.args.get("approval") == "human":  # a confirmation a person must approve first
        token = action.args.get("token", "TOKEN")
        return f"{ways_text(token, action.args.get('approvers'))}; then run: {command_line(action)}"
    return command_line(action)


say = CliWords()


def next_line(actions: list[NextAction] | tuple[NextAction, ...], lead: str = "") -> str:
    """``Next: ...`` for a result's next actions, or nothing when there are none."""
    said = say_all(actions, say, lead=lead)
    return f"Next: {said}" if said else ""


def error_text(exc: CanalError, redact: Redact | None = None) -> str:
    return render_error(exc, redact, say)


def error_data(exc: CanalError, redact: Redact | None = None) -> dict[str, Any]:
    return error_json(exc, redact, say)
