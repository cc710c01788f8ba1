"""Secret redaction: the gitleaks default rules plus entropy checks, replacing each secret found by a
stable placeholder ``[REDACTED_SECRET:<rule>:<id>]`` before text reaches state, audit or the agent."""

from runtime.redact.detector import PLACEHOLDER, Detector, Finding
from runtime.redact.redactor import ID_PURPOSE, Redactor, restore
from runtime.redact.rules import RuleSet, default_rules

__all__ = ["ID_PURPOSE", "PLACEHOLDER", "Detector", "Finding", "Redactor", "RuleSet", "default_rules",
           "restore"]
