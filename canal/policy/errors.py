"""Errors of the policy engine. Each class has a stable UPPER_SNAKE ``code`` and an exit code."""

from __future__ import annotations

from canal.core.errors import CanalError, register
from canal.core.next import act


class PolicyError(CanalError):
    code = "POLICY_ERROR"
    exit_code = 2


class PolicyLoadError(PolicyError):
    """A policy file could not be loaded: bad YAML, unknown field, bad CEL or a failing example."""

    code = "POLICY_INVALID"

    def __init__(self, message: str, *, file: str = "", rule: str = "", line: int = 0, column: int = 0,
                 hint: str = "") -> None:
        super().__init__(message, hint=hint or "fix the file", next=act("policy.test", file=file or "FILE"),
                         details={"file": file, "rule": rule, "line": line, "column": column})
        self.file = file
        self.rule = rule
        self.line = line
        self.column = column


POLICY_NOT_FOUND = register(PolicyError, "POLICY_NOT_FOUND", "Policy not found.")
