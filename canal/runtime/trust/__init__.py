"""Trusted configuration: canal.yaml and its policy files take effect only once a person approved them."""

from canal.runtime.trust.compare import Change, compare
from canal.runtime.trust.errors import CONFIG_TRUST_INVALID, ConfigUnapproved
from canal.runtime.trust.service import TrustedConfig, TrustStatus
from canal.runtime.trust.snapshot import Snapshot, policy_file_path, take_snapshot

__all__ = [
           "CONFIG_TRUST_INVALID",
           "Change",
           "ConfigUnapproved",
           "Snapshot",
           "TrustStatus",
           "TrustedConfig",
           "compare",
           "policy_file_path",
           "take_snapshot",
]
