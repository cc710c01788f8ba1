"""The footer's "not covered" notice is said once per set of paths per session, and shortly: a Python
project's .pyc files are not news on every command."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend


@pytest.fixture
def canal(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    (project / "pkg" / "__pycache__").mkdir(parents=True)
    (project / ".gitignore").write_text("*.pyc\n__pycache__/\n.venv/\n")
    for name in ("alpha", "beta", "gamma", "delta", "epsilon"):
        (project / "pkg" / f"{name}_with_a_long_module_name.py").write_text("x = 1\n")
        (project / "pkg" / f"{name}_with_a_long_module_name.cpython-311.pyc").write_bytes(b"\0pyc")
    (project / ".venv").mkdir()
    return Canal(project, config=CanalConfig(), backend=FakeBackend())


def _notice(text: str) -> str:
    footer = text.splitlines()[-1]
    return next((part for part in footer.strip("[]").split(" | ") if "not covered" in part), "")


def test_the_notice_is_said_once_and_shortly(canal: Canal) -> None:
    first = canal.run("echo 1 > out.txt")
    said = _notice(first.text)
    assert said, first.text
    assert len(said) <= 90, said
    second = canal.run("echo 2 > out.txt")
    assert _notice(second.text) == "", second.text
    assert second.checkpoint is not None
    assert second.checkpoint.not_covered_total == first.checkpoint.not_covered_total  # still in the data


def test_the_notice_comes_back_when_the_set_changes(canal: Canal) -> None:
    canal.run("echo 1 > out.txt")
    (canal._services.project_dir / "pkg" / "new.cpython-311.pyc").write_bytes(b"\0")
    again = canal.run("echo 2 > out.txt")
    assert _notice(again.text), again.text
