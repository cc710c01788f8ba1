"""A mount's target inside the sandbox: absolute, normalized, never over /proc, /sys, /dev, nor inside
/tmp, which the policy treats as the sandbox's own scratch space (standard lets commands change it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from canal.sandbox.spec import Mount


@pytest.mark.parametrize("target", ["/tmp", "/tmp/data", "/proc/x", "relative", "/a/../b", "/"])
def test_a_bad_target_is_refused(target: str) -> None:
    with pytest.raises(ValidationError):
        Mount(source=Path("/srv/x"), target=target)


def test_an_ordinary_target_is_kept() -> None:
    assert Mount(source=Path("/srv/x"), target="/mnt/data").target == "/mnt/data"
