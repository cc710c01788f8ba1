"""A project runs at most ``limits.sandboxes`` sandboxes at once; one more is refused with the way out."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.runtime.errors import SANDBOX_LIMIT_REACHED, ConfigError
from canal.runtime.settings.config import CanalConfig, parse_config
from canal.runtime.trust.compare import tightens
from canal.runtime.trust.snapshot import trusted_settings
from canal.sandbox.fake import FakeBackend
from tests.error_codes import raises_code


@pytest.fixture
def canal(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return Canal(project, config=parse_config("limits: {sandboxes: 2}\n"), backend=FakeBackend())


def test_one_past_the_limit_is_refused_with_the_way_out(canal: Canal) -> None:
    canal.up("one")
    canal.up("two")
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    with raises_code(SANDBOX_LIMIT_REACHED) as refused:
        canal.up("three")
    error = refused.value
    assert error.code == "SANDBOX_LIMIT_REACHED"
    assert error.message.startswith("Project ")
    assert "already runs 2 sandbox(es) (one, two), the most canal.yaml's limits.sandboxes allows (2)" \
        in error.message
    assert "Sandbox three was not started" in error.message
    assert [a.kind for a in error.next] == ["ps", "down"]
    assert error.details == {"limit": 2, "running": ["one", "two"], "sandbox": "three"}
    assert not [i for i in backend.list() if i.name.endswith("-three")]


def test_a_running_sandbox_is_used_at_the_limit_and_a_stopped_one_frees_its_place(canal: Canal) -> None:
    canal.up("one")
    canal.up("two")
    assert canal.run("true", sandbox="one").status == "ok"  # running already: not a new one
    canal.down("two")
    canal.up("three")
    with raises_code(SANDBOX_LIMIT_REACHED):
        canal.run("true", sandbox="four")


def test_the_default_is_8_and_out_of_range_is_invalid() -> None:
    assert CanalConfig().limits.sandboxes == 8
    with pytest.raises(ConfigError):
        parse_config("limits: {sandboxes: 0}\n")


def test_a_trusted_setting_only_where_set_and_lower_is_tighter() -> None:
    assert "limits" not in trusted_settings(CanalConfig())  # approvals made before it stay valid
    assert trusted_settings(parse_config("limits: {sandboxes: 3}\n"))["limits"] == {"sandboxes": 3}
    assert tightens("limits.sandboxes", None, 4)  # from the default (8)
    assert tightens("limits.sandboxes", 4, 2)
    assert not tightens("limits.sandboxes", 4, 5)
    assert not tightens("limits.sandboxes", 4, None)  # back to the default, 8
    assert not tightens("limits.sandboxes", None, 9)
