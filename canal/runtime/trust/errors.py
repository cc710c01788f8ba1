"""Errors of trusted configuration: settings that would take effect without a person's approval."""

from __future__ import annotations

from canal.core.errors import ExitCode
from canal.runtime.errors import ConfigError


class ConfigUnapproved(ConfigError):
    """canal.yaml or a policy file loosens the settings a person approved; nothing runs until one does."""

    code = "CONFIG_UNAPPROVED"
    exit_code = ExitCode.USAGE


class TrustRecordInvalid(ConfigError):
    """The host-side record of approved settings is damaged or forged."""

    code = "CONFIG_TRUST_INVALID"
    exit_code = ExitCode.CANAL_ERROR
