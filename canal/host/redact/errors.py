"""Errors of the redaction rules: a rules file that cannot be used is refused, naming file and rule."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class RedactRulesError(CanalError):
    """A gitleaks-format rules file (built-in or from ``CANAL_REDACT_RULES``) is unreadable or invalid.

    ``details`` names the ``file`` and the ``rule``.
    """

    code = "REDACT_RULES_INVALID"
    exit_code = ExitCode.USAGE
