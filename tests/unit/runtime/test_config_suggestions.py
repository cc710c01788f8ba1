"""A mistyped or misplaced key in canal.yaml is named with where it belongs, as a new user needs."""

from __future__ import annotations

import pytest

from canal.runtime.errors import ConfigError
from canal.runtime.settings.config import parse_config


def problem(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    return caught.value.message


def test_a_key_at_the_wrong_level_names_where_it_belongs() -> None:
    said = problem("approval: human\n")
    assert "canal.yaml:1: approval:" in said
    assert "policy.approval" in said


def test_a_misspelt_key_names_the_closest_one() -> None:
    assert "did you mean 'policy'" in problem("polcy:\n  profile: strict\n")
    assert "did you mean 'profile'" in problem("policy:\n  profil: strict\n")
    assert "did you mean 'limits'" in problem("sandbox:\n  limit: {cpus: 1}\n")


def test_an_unknown_key_with_no_near_match_says_only_that() -> None:
    said = problem("flavour: vanilla\n")
    assert "flavour: Extra inputs are not permitted" in said
    assert "did you mean" not in said
