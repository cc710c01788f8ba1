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


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("pair", PAIRS, ids=[p["id"] for p in PAIRS])
def test_disguise_is_at_least_as_strict(pair: dict[str, Any], profile: str) -> None:
    policy: Policy = PROFILES[profile]
    canonical = policy.decide(pair["canonical"])
    disguised = policy.decide(pair["disguised"])
    assert STRICTNESS[disguised.action] >= STRICTNESS[canonical.action], (
        f"{pair['family']}: {pair['disguised']!r} is {disguised.action}, "
        f"{pair['canonical']!r} is {canonical.action}: {disguised.reason}")
