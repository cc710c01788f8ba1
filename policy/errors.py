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
