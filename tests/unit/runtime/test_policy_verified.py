"""A new project's first command runs no policy example that another project of the user's already passed
(the marks live in the private cache folder, under a key of the user's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend
from tests.policy_examples import examples_run


@pytest.fixture
def ran(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    return examples_run(monkeypatch)


def _canal(root: Path, name: str) -> Canal:
    project = root / name
    project.mkdir()
    return Canal(project, config=CanalConfig(), backend=FakeBackend())


def test_a_second_project_skips_the_examples_the_first_passed(tmp_path: Path, ran: list[str]) -> None:
    first = _canal(tmp_path, "one").policy
    second = _canal(tmp_path, "two").policy
    assert ran == ["standard"]
    assert second.hash == first.hash
    assert second.decide("rm -rf /").action == "deny"
    assert [p.name for p in (tmp_path / "cache" / "policy-verified").iterdir()]


def test_another_key_runs_them_again(tmp_path: Path, ran: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    first = _canal(tmp_path, "one").policy
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "other-config"))  # another key store
    assert _canal(tmp_path, "two").policy.hash == first.hash
    assert ran == ["standard", "standard"]
