"""Issue 36's corpus (``canal-edges.yaml``): secret reads through option values, revision paths and
environment dumps, writing options, writable redirects, privilege wrappers, control characters, deletes
and overwrites outside the workspace, spellings of home, and read-only commands strict should allow.

Every case of a technique family is its own test in both profiles (strict: none too permissive;
standard: none irreversible and allowed). The read-only family is held as a rate: strict may still ask
about a few (each a round trip for the agent), under 3% of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from canal.policy import Policy

CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus" / "canal-edges.yaml"
GROUPS: dict[str, list[dict[str, Any]]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
CASES = [case for name, group in GROUPS.items() if name != "readonly" for case in group]
READ_ONLY = GROUPS["readonly"]
MAX_FALSE_POSITIVES = 0.03


def test_every_family_has_cases_and_ids_are_unique() -> None:
    assert len(GROUPS) == 11
    assert all(len(group) >= 7 for group in GROUPS.values())
    assert len(READ_ONLY) >= 100
    ids = [c["id"] for group in GROUPS.values() for c in group]
    assert len(set(ids)) == len(ids)


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


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_standard(standard: Policy, case: dict[str, Any]) -> None:
    _check(standard, case, "standard")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_strict(strict: Policy, case: dict[str, Any]) -> None:
    _check(strict, case, "strict")


def test_standard_allows_every_read_only_command(standard: Policy) -> None:
    asked = [c["cmd"] for c in READ_ONLY if standard.decide(c["cmd"]).action != "allow"]
    assert asked == []


def test_strict_false_positives_on_read_only_commands_stay_under_3_percent(strict: Policy) -> None:
    asked = [c["cmd"] for c in READ_ONLY if strict.decide(c["cmd"]).action != "allow"]
    rate = len(asked) / len(READ_ONLY)
    assert rate < MAX_FALSE_POSITIVES, f"{len(asked)}/{len(READ_ONLY)} = {rate:.1%}: {asked}"
