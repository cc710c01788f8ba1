"""The disguise invariant: a disguised command gets at least the decision of its canonical form.

Every pair of the public file (``policy-disguises.yaml``, a copy of the team's) and of Canal's own
(``canal-disguises.yaml``), under both shipped profiles, is its own test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from canal.policy import Policy, load_policy
from canal.policy.decision import STRICTNESS

CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus"
PAIRS = [*yaml.safe_load((CORPUS / "policy-disguises.yaml").read_text()),
         *yaml.safe_load((CORPUS / "canal-disguises.yaml").read_text())]
PROFILES = {"standard": load_policy("standard"), "strict": load_policy("strict")}


def test_public_file_is_the_full_copy() -> None:
    public = yaml.safe_load((CORPUS / "policy-disguises.yaml").read_text())
    assert len(public) == 30
    assert len({p["id"] for p in PAIRS}) == len(PAIRS)


# A pair whose canonical form a profile allows tests nothing there (any decision is at least allow):
# only the pairs and profiles where the canonical form is confirmed or denied are cases (issue 35).
CASES = [(pair, profile) for pair in PAIRS for profile in sorted(PROFILES)
         if PROFILES[profile].decide(pair["canonical"]).action != "allow"]


def test_every_pair_is_a_case_under_some_profile() -> None:
    covered = {pair["id"] for pair, _ in CASES}
    assert covered == {p["id"] for p in PAIRS}, "a pair whose canonical form every profile allows"


@pytest.mark.parametrize(("pair", "profile"), CASES, ids=[f"{p['id']}-{prof}" for p, prof in CASES])
def test_disguise_is_at_least_as_strict(pair: dict[str, Any], profile: str) -> None:
    policy: Policy = PROFILES[profile]
    canonical = policy.decide(pair["canonical"])
    disguised = policy.decide(pair["disguised"])
    assert STRICTNESS[disguised.action] >= STRICTNESS[canonical.action], (
        f"{pair['family']}: {pair['disguised']!r} is {disguised.action}, "
        f"{pair['canonical']!r} is {canonical.action}: {disguised.reason}")
