"""`canal policy` commands: exit codes, JSON shapes, the stdin stream, refusal of bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.runtime.services import Services
from canal.runtime.trust.service import Approver

PROFILES = Path(__file__).parents[3] / "canal" / "policy" / "profiles"


def test_check_exit_codes_and_json() -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["policy", "check", "--", "git status"]).exit_code == 0
    res = runner.invoke(cli, ["policy", "check", "--json", "--", "rm -rf build"])
    assert res.exit_code == 120
    assert json.loads(res.stdout)["rule_ids"] == ["rm-recursive"]
    assert runner.invoke(cli, ["policy", "check", "--", "rm -rf /"]).exit_code == 121


def test_check_stdin_stream() -> None:
    res = CliRunner().invoke(cli, ["policy", "check", "--stdin", "--profile", "strict"],
                             input='"ls"\n"make"\nnot json\n')
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert [line["decision"] for line in lines] == ["allow", "confirm", "deny"]
    assert set(lines[0]) >= {"decision", "rules", "reason", "segments"}


def test_test_shipped_profiles() -> None:
    res = CliRunner().invoke(cli, ["policy", "test", str(PROFILES / "standard.yaml"),
                                   str(PROFILES / "strict.yaml")])
    assert res.exit_code == 0, res.output
    assert res.stdout.count("ok ") == 2


def test_lint_refuses_bad_cel(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndefault: allow\nrules:\n  - id: a\n    decision: deny\n    expression: 'x =='\n")
    res = CliRunner().invoke(cli, ["policy", "lint", str(bad)])
    assert res.exit_code == 2
    assert "POLICY_INVALID" in res.stderr
    assert f"{bad}:6" in res.stderr


def test_explain_json_lists_facts() -> None:
    res = CliRunner().invoke(cli, ["policy", "explain", "--json", "--", "env -i bash -c 'rm x'"])
    data = json.loads(res.stdout)
    assert data["segments"][0]["facts"]["wrappers"] == ["env", "bash"]


def test_check_decides_with_the_cwd_it_is_given_and_says_it() -> None:
    runner = CliRunner()
    here = runner.invoke(cli, ["policy", "check", "--", "rm -rf workspace"])
    assert here.exit_code == 120, here.output
    assert "  cwd: /workspace\n" in here.stdout
    root = runner.invoke(cli, ["policy", "check", "--cwd", "/", "--", "rm -rf workspace"])
    assert root.exit_code == 121, root.output
    assert "  cwd: /\n" in root.stdout
    assert json.loads(runner.invoke(cli, ["policy", "check", "--json", "--cwd", "/", "--",
                                          "rm -rf workspace"]).stdout)["cwd"] == "/"


def test_check_decides_with_the_session_variables_it_is_given() -> None:
    runner = CliRunner()
    args = ["policy", "check", "--profile", "strict"]
    assert runner.invoke(cli, [*args, "--", "ls"]).exit_code == 0
    changed = runner.invoke(cli, [*args, "--session-env", "PATH=/workspace/.bin:/usr/bin", "--", "ls"])
    assert changed.exit_code == 120, changed.output
    assert "session-environment" in changed.stdout
    assert "  session: PATH=/workspace/.bin:/usr/bin\n" in changed.stdout


def test_check_decides_in_the_projects_workspace_folder(tmp_path: Path, state_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`canal policy check` decides as `canal run` does: in a project whose workspace is at /src, a write
    there is inside it (the default cwd is /src too) and one to /workspace is not."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "canal.yaml").write_text("sandbox:\n  workdir: /src\n")
    services = Services(project)
    services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(project))
    runner = CliRunner()
    inside = runner.invoke(cli, ["policy", "check", "--json", "--", "echo x > notes.txt"])
    assert inside.exit_code == 0, inside.output
    assert json.loads(inside.stdout)["cwd"] == "/src"
    outside = runner.invoke(cli, ["policy", "check", "--json", "--", "echo x > /workspace/notes.txt"])
    assert outside.exit_code == 120, outside.output
    assert json.loads(outside.stdout)["rule_ids"] == ["outside-workspace-write"]
