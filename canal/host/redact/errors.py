"""Errors of the redaction rules: a rules file that cannot be used is refused, naming file and rule."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register

REDACT_RULES_INVALID = register(CanalError, "REDACT_RULES_INVALID", """
    A gitleaks-format rules file (built-in or from ``CANAL_REDACT_RULES``) is unreadable or invalid.

    ``details`` names the ``file`` and the ``rule``.
    """, exit_code=ExitCode.USAGE)
