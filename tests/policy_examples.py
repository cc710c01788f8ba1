"""Which policies' inline examples ran, for the tests of the marks that let a load skip them."""

from __future__ import annotations

from typing import Any

import pytest

from canal.policy import Policy, loader


def examples_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, the name of each policy whose examples run is appended to the returned list."""
    ran: list[str] = []
    real = loader.check_examples

    def check(policy: Policy, specs: Any) -> None:
        ran.append(policy.name)
        real(policy, specs)

    monkeypatch.setattr(loader, "check_examples", check)
    return ran
