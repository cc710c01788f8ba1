"""``canal workflow`` commands that need no sandbox: author, validate, list, start, reject, abort, runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    return CliRunner()


def test_init_add_step_validate_and_list(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["workflow", "init", "deploy", "--description", "Deploy it"]).exit_code == 0
    added = runner.invoke(cli, ["workflow", "add-step", "deploy", "--id", "build", "--type", "automated"])
    assert added.exit_code == 0, added.output
    assert "references/02-build.md" in added.output
    checked = runner.invoke(cli, ["workflow", "validate", "deploy"])
    assert (checked.exit_code, checked.output) == (0, "ok deploy (2 steps)\n")
    listed = runner.invoke(cli, ["workflow", "list"]).output.splitlines()
    assert listed[0] == "deploy: Deploy it (2 steps, v1)"  # the project's own first, then the examples
    assert {line.split(":")[0] for line in listed[1:]} >= {"cleanup-build", "project-bootstrap"}


def test_validate_names_file_and_line_and_exits_2(runner: CliRunner) -> None:
    runner.invoke(cli, ["workflow", "init", "broken"])
    step = Path("workflows/broken/references/01-collect-input.md")
    step.write_text(step.read_text().replace("type: interactive", "type: interactive\nautomation: {}"))
    checked = runner.invoke(cli, ["workflow", "validate", "broken", "--json"])
    assert checked.exit_code == 2
    report = json.loads(checked.output)
    assert report["status"] == "invalid"
    assert report["workflows"][0]["problems"][0]["file"].endswith("01-collect-input.md")


def test_start_reject_abort_and_runs_without_a_sandbox(runner: CliRunner) -> None:
    started = json.loads(runner.invoke(cli, ["workflow", "start", "cleanup-build", "--json"]).output)
    run = started["run_id"]
    rejected = runner.invoke(cli, ["workflow", "advance", "--gate-data", '{"directory": "../etc"}'])
    assert rejected.exit_code == 2
    assert "GATE_REJECTED" in rejected.output
    assert "invalid directory" in rejected.output
    bad_json = runner.invoke(cli, ["workflow", "advance", "--gate-data", "{nope"])
    assert (bad_json.exit_code, "--gate-data is not JSON" in bad_json.output) == (2, True)
    current = runner.invoke(cli, ["workflow", "current"])  # RUN defaults to the active run
    assert current.output.startswith(f"run {run} (cleanup-build v1): waiting_input\n")
    assert runner.invoke(cli, ["workflow", "abort", run, "--reason", "test"]).exit_code == 0
    none_left = runner.invoke(cli, ["workflow", "current"])
    assert none_left.exit_code == 2
    assert none_left.output.startswith("NO_ACTIVE_RUN\n")
    runs = json.loads(runner.invoke(cli, ["workflow", "runs", "--json"]).output)["runs"]
    assert [(r["run_id"], r["status"]) for r in runs] == [(run, "aborted")]
