"""MCP's ``sandbox`` argument: the project's own sandbox, an existing one, or a fork; never a new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.mcp import schemas
from canal.mcp.errors import SANDBOX_UNKNOWN
from canal.mcp.operations import Operations
from canal.mcp.sandboxes import existing_sandbox
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend
from tests.error_codes import raises_code


@pytest.fixture
def canal(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return Canal(project, config=CanalConfig(), backend=FakeBackend())


def test_the_own_sandbox_and_existing_ones_are_taken(canal: Canal) -> None:
    assert existing_sandbox(canal, None) is None
    assert existing_sandbox(canal, "default") == "default"  # even before it runs
    canal.up("helper")
    assert existing_sandbox(canal, "helper") == "helper"


def test_a_new_name_is_refused_with_the_existing_ones_and_nothing_starts(canal: Canal) -> None:
    canal.up("helper")
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    before = [i.name for i in backend.list()]
    with raises_code(SANDBOX_UNKNOWN) as refused:
        Operations(canal).run_command(schemas.RunCommandArgs(command="echo never", sandbox="brand-new"))
    error = refused.value
    assert error.code == "SANDBOX_UNKNOWN"
    assert error.message == ("No sandbox or fork named brand-new in this project (there are: default, "
                             "helper). Nothing was run.")
    assert error.details == {"sandbox": "brand-new", "existing": ["default", "helper"]}
    assert [(a.kind, dict(a.args)) for a in error.next] == [("fork.start", {"name": "brand-new"})]
    assert [i.name for i in backend.list()] == before
