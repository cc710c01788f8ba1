"""Secret redaction: Canal's own rules (gitleaks TOML format; an operator can add more, such as the
upstream gitleaks config, with ``CANAL_REDACT_RULES``) plus entropy checks, replacing each secret found
by a stable placeholder ``[REDACTED_SECRET:<rule>:<id>]`` before text reaches state, audit or the agent."""

from canal.host.redact.detector import PLACEHOLDER, Detector, Finding
from canal.host.redact.errors import REDACT_RULES_INVALID
from canal.host.redact.redactor import ID_PURPOSE, Redactor, restore, warm_up
from canal.host.redact.rules import (
           ENV_VAR,
           RuleSet,
           builtin_rules,
           default_rules,
           merge_rules,
           parse_rules,
)

__all__ = [
           "ENV_VAR",
           "ID_PURPOSE",
           "PLACEHOLDER",
           "REDACT_RULES_INVALID",
           "Detector",
           "Finding",
           "Redactor",
           "RuleSet",
           "builtin_rules",
           "default_rules",
           "merge_rules",
           "parse_rules",
           "restore",
           "warm_up",
]
