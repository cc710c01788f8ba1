"""The decision: plain data for the pipeline and the audit log."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Action = Literal["allow", "confirm", "deny"]
Source = Literal["rule", "no_match", "parse_failure", "eval_error", "unattended", "empty"]
STRICTNESS: dict[str, int] = {"allow": 0, "confirm": 1, "deny": 2}


def strictest(a: Action, b: Action) -> Action:
    return a if STRICTNESS[a] >= STRICTNESS[b] else b


@dataclass(frozen=True)
class Decision:
    action: Action
    rule_ids: tuple[str, ...]
    reasons: tuple[str, ...]
    segment: str  # text of the segment that decided (the strictest one)
    policy_hash: str
    source: Source
    targets: tuple[str, ...] = ()  # paths a destructive command would delete or overwrite
    # where git commands start looking for their repository, and the repositories --git-dir/GIT_DIR name:
    # the sandbox-side override scans those inside the workspace before the command (sandboxes.gitguard)
    git_starts: tuple[str, ...] = ()
    git_dirs: tuple[str, ...] = ()
    profile: str = ""
    segments: int = 0
    parser_version: str = ""
    elapsed_ms: float = 0.0
    read_only: bool = False  # proven to write no file and run no other code (canal.policy.readonly)
    opaque: bool = False  # some segment runs code the policy cannot read (python3 -c, sh -c, $(...))

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["rule_ids"] = list(self.rule_ids)
        data["reasons"] = list(self.reasons)
        data["targets"] = list(self.targets)
        data["git_starts"] = list(self.git_starts)
        data["git_dirs"] = list(self.git_dirs)
        return data
