from __future__ import annotations

import pytest

from canal.policy import Policy, load_policy


@pytest.fixture(scope="session")
def standard() -> Policy:
    return load_policy("standard")


@pytest.fixture(scope="session")
def strict() -> Policy:
    return load_policy("strict")
