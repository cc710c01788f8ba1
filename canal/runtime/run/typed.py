"""A command as it would be typed with the variables its request gives it.

A tool's ``env:``, a workflow step's ``automation.env`` and a task's variables reach the process as an
assignment typed before the command would: ``GIT_EXTERNAL_DIFF`` makes ``git diff`` run a program,
``LD_PRELOAD`` loads one into every process, ``PAGER`` names one. So the policy decides, the approver is
shown, the token is bound to, and the audit log records the typed equivalent: ``export NAME=value; ``
before a shell command, ``env -- NAME=value`` before an argv (which ``env`` runs exactly). Only the
execution-relevant names (the shell parser's own table) are written out; others change nothing the
policy decides.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from canal.policy.facts import EXEC_VARIABLES


def as_typed(command: str | Sequence[str], env: Mapping[str, str] | None) -> str | Sequence[str]:
    assigned = sorted((k, v) for k, v in (env or {}).items() if EXEC_VARIABLES.match(k))
    if not assigned:
        return command
    if isinstance(command, str):
        return "".join(f"export {k}={shlex.quote(v)}; " for k, v in assigned) + command
    return ["env", "--", *(f"{k}={v}" for k, v in assigned), *command]


def text_of(command: str | Sequence[str]) -> str:
    return command if isinstance(command, str) else shlex.join(command)
