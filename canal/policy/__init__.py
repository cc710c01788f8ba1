"""Canal's policy engine: CEL rules over parsed shell commands, two shipped profiles, fail closed.

    policy = load_policy("standard")
    decision = policy.decide("rm -rf build/")  # action "confirm", rule_ids ("rm-recursive",)
"""

from canal.policy.decision import Decision
from canal.policy.engine import Policy, SegmentReport
from canal.policy.loader import PROFILES, build_policy, load_fork_policy, load_policy

__all__ = ["PROFILES", "Decision", "Policy", "SegmentReport", "build_policy", "load_fork_policy",
           "load_policy"]
