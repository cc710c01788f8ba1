"""Errors of trusted configuration: settings that would take effect without a person's approval."""

from __future__ import annotations

from canal.core.errors import ExitCode, register
from canal.runtime.errors import ConfigError


class ConfigUnapproved(ConfigError):
    """canal.yaml or a policy file loosens the settings a person approved; nothing runs until one does."""

    code = "CONFIG_UNAPPROVED"
    exit_code = ExitCode.USAGE


CONFIG_TRUST_INVALID = register(ConfigError, "CONFIG_TRUST_INVALID", """
    The host-side record of approved settings is damaged or forged.
    """, exit_code=ExitCode.CANAL_ERROR)
