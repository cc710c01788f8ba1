"""Acceptance: every adversarial, benign and findings corpus entry reaches its decision in both profiles.

Each (profile, case) is its own test, so pytest's summary line is the pass count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from canal.policy import Policy

CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus"


def _cases() -> list[dict[str, Any]]:
    adversarial = yaml.safe_load((CORPUS / "policy-adversarial.yaml").read_text())
    benign = yaml.safe_load((CORPUS / "policy-benign.yaml").read_text())
    cases = [case for group in adversarial.values() for case in group]
    cases += [dict(case, id=f"BN-{i:02d}") for i, case in enumerate(benign, 1)]
    findings = yaml.safe_load((CORPUS / "canal-findings.yaml").read_text())
    cases += [case for group in findings.values() for case in group]
    return cases


CASES = _cases()


def test_corpus_is_the_full_copy() -> None:
    findings = yaml.safe_load((CORPUS / "canal-findings.yaml").read_text())
    assert len(CASES) == 186 + sum(len(group) for group in findings.values())
    assert len({c["id"] for c in CASES}) == len(CASES)


def _check(policy: Policy, case: dict[str, Any], profile: str) -> None:
    want = case[profile]
    decision = policy.decide(case["cmd"])
    if want == "allow":
        assert decision.action == "allow", decision.to_json()
    elif want == "deny":
        assert decision.action == "deny", decision.to_json()
    elif want == "not-allow":
        assert decision.action in ("confirm", "deny"), decision.to_json()
    else:
        assert want == "any"
        assert decision.action in ("allow", "confirm", "deny")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_standard(standard: Policy, case: dict[str, Any]) -> None:
    _check(standard, case, "standard")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_strict(strict: Policy, case: dict[str, Any]) -> None:
    _check(strict, case, "strict")
