"""Errors of the policy engine. Each class has a stable UPPER_SNAKE ``code`` and an exit code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar


class PolicyError(Exception):
    code: ClassVar[str] = "POLICY_ERROR"
    exit_code: ClassVar[int] = 2

    def __init__(self, message: str, *, hint: str = "", details: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = dict(details or {})


class PolicyLoadError(PolicyError):
    """A policy file could not be loaded: bad YAML, unknown field, bad CEL or a failing example."""

    code: ClassVar[str] = "POLICY_INVALID"

    def __init__(self, message: str, *, file: str = "", rule: str = "", line: int = 0, column: int = 0,
                 hint: str = "") -> None:
        super().__init__(message, hint=hint or f"fix the file, then run: canal policy test {file or 'FILE'}",
                         details={"file": file, "rule": rule, "line": line, "column": column})
        self.file = file
        self.rule = rule
        self.line = line
        self.column = column


class PolicyNotFoundError(PolicyError):
    code: ClassVar[str] = "POLICY_NOT_FOUND"
