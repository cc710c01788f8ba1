"""One context per ``canal`` invocation: ``-C DIR`` picks the project, one Canal is built and closed."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.runtime.api import Canal


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"k" * 32).decode())
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "canal.yaml").write_text("workspace: rw\n")
    (project / "src" / "app.py").write_text("print('hi')\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return project


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_project_option_picks_the_project_and_the_base_of_relative_paths(env: Path) -> None:
    shown = invoke("-C", str(env / "src"), "view", "app.py", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["path"] == "src/app.py"
    written = invoke("--project", str(env), "write", "notes.txt", "--json")
    assert written.exit_code == 0, written.output
    assert (env / "notes.txt").is_file()


def test_without_the_option_the_working_directory_is_the_project(env: Path) -> None:
    listed = invoke("view", ".", "--json")
    assert listed.exit_code == 0, listed.output
    assert "app.py" not in listed.output  # the folder we stand in, not the project
    assert not (env / "notes.txt").exists()


def test_project_option_wins_over_the_environment(env: Path, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(tmp_path / "elsewhere"))
    shown = invoke("-C", str(env), "view", "src/app.py", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["path"] == "src/app.py"


@pytest.mark.parametrize("args", [
    ("workflow", "list"), ("workflow", "runs"), ("view", "."), ("audit", "show"), ("state", "verify"),
    ("key", "show"), ("approvals",), ("trash", "list"), ("tool", "list"), ("ps",),
])
def test_each_invocation_builds_at_most_one_canal_and_closes_it(env: Path, monkeypatch: pytest.MonkeyPatch,
                                                                args: tuple[str, ...]) -> None:
    opened: list[int] = []
    closed: list[int] = []
    real_init, real_close = Canal.__init__, Canal.close

    def init(self: Canal, *a: Any, **kw: Any) -> None:
        opened.append(id(self))
        real_init(self, *a, **kw)

    def close(self: Canal) -> None:
        closed.append(id(self))
        real_close(self)

    monkeypatch.setattr(Canal, "__init__", init)
    monkeypatch.setattr(Canal, "close", close)
    if args == ("ps",):
        monkeypatch.setattr(Canal, "ps", lambda self: [])  # no engine needed to count
    monkeypatch.chdir(env)
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert len(opened) <= 1, args
    assert sorted(opened) == sorted(closed), f"{args}: a Canal was left open"
