from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from canal.cli.admin import help_cmd
from canal.cli.main import CanalGroup
from canal.cli.work import discover_cmd, tool_cmd
from canal.runtime.api import Canal
from canal.runtime.run.result import ConfirmationView, RunResult


@click.group(cls=CanalGroup)
def cli() -> None:
    """Canal test root."""


for _module in (tool_cmd, discover_cmd, help_cmd):
    _module.register(cli)


@pytest.fixture
def runner(project: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(project))
    return CliRunner()


def test_discover_prints_one_summary_line(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["discover"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        '{"status":"ok","total":5,"added_count":5,"removed_count":0,"added":["clean_build",'
        '"create_project","list_files","onboard","report"],"removed":[],"workflow_count":1}']
    assert "tokens" in result.stderr
    again = runner.invoke(cli, ["discover", "--json"])
    assert json.loads(again.stdout)["added"] == []
    assert again.stderr == ""


def test_tool_meta_required_only_output(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["tool", "meta", "create_project", "--required-only"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "create_project: Create a project on the deploy service",
        "result: json | idempotent: no",
        "fields (* required):",
        "  name* string: Project name",
        "  host* string: Service domain (pattern ^[a-z0-9.-]+$)",
        "  api_token* string, sensitive: Deploy API token",
        "call: canal tool call create_project --args "
        "'{\"name\": \"<string>\", \"host\": \"<string>\", \"api_token\": \"<string>\"}'",
    ]
    as_json = json.loads(runner.invoke(cli, ["tool", "meta", "create_project", "--required-only",
                                             "--json"]).stdout)
    assert [f["name"] for f in as_json["tool"]["fields"]] == ["name", "host", "api_token"]


def test_tool_list(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["tool", "list"])
    assert result.stdout.splitlines()[0] == "clean_build: Delete a build folder (destructive)"
    assert len(result.stdout.splitlines()) == 4


def test_call_missing_required_field_is_rejected_with_the_list(runner: CliRunner,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[Any] = []
    monkeypatch.setattr(Canal, "run_argv", lambda *a, **kw: ran.append(a))
    result = runner.invoke(cli, ["tool", "call", "create_project", "--args", '{"name": "x"}'])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "TOOL_ARGS_INVALID",
        "tool create_project: missing required fields: host (Service domain), api_token (Deploy API token). "
        "Nothing was run.",
        "Next: canal tool meta create_project"]
    assert result.stdout == ""
    assert ran == []


def test_call_with_bad_json_args(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["tool", "call", "clean_build", "--args", "[1]"])
    assert result.exit_code == 2
    assert "--args must be a JSON object" in result.stderr


def _fake_result(status: str, **extra: Any) -> RunResult:
    return RunResult(status=status, exit_code=extra.pop("exit_code", None), reason="", duration_s=0.1,
                     **extra)  # type: ignore[arg-type]


def test_call_passes_argv_env_and_timeout_and_renders_confirmation(runner: CliRunner,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[list[str], dict[str, Any]]] = []

    def fake(canal: Canal, argv: list[str], **options: Any) -> RunResult:
        seen.append((argv, options))
        view = ConfirmationView(token="c_1", reason="rm -rf matches rule rm-recursive",
                                expires_at="2030-01-01T00:00:00Z")
        return _fake_result("confirmation_required", confirmation=view)

    monkeypatch.setattr(Canal, "run_argv", fake)
    result = runner.invoke(cli, ["tool", "call", "clean_build", "--args", '{"dir": "build"}'])
    assert result.exit_code == 120
    assert seen[0][0] == ["rm", "-rf", "--", "build"]
    assert result.stderr.splitlines()[0] == "CONFIRMATION_REQUIRED"
    assert result.stderr.splitlines()[-1] == (
        "Ask the user, then run: canal tool call clean_build --args '{\"dir\": \"build\"}' --confirm c_1")


def test_call_output_and_exit_code_pass_through(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    failed = _fake_result("failed", exit_code=3, output="boom\n")
    monkeypatch.setattr(Canal, "run_argv", lambda *a, **kw: failed)
    result = runner.invoke(cli, ["tool", "call", "list_files", "--args", '{"path": "."}'])
    assert (result.exit_code, result.stdout) == (3, "boom\n")


def test_level0_index_lists_commands_then_workflows_and_tools(runner: CliRunner, project: Path) -> None:
    runner.invoke(cli, ["discover"])
    text = help_cmd.level0_index(cli, project)
    lines = text.splitlines()
    assert lines[:5] == [
        "Canal test root.", "commands:",
        "  discover: Scan tools/ and workflows/, compare with the cached index, regenerate it.",
        "  help: Help in three levels: canal help (index), canal help CMD, canal help CMD --full.",
        "  tool: List the project's tools, show one tool's fields, call a tool in a sandbox. "
        "(call|list|meta)"]
    assert lines[5:8] == ["workflows:", "  onboard: Onboard a new project end to end", "tools:"]
    assert runner.invoke(cli, ["help"]).stdout.rstrip("\n") == text


def test_level0_index_without_discover_says_what_to_run(tmp_path: Path) -> None:
    assert "run: canal discover" in help_cmd.level0_index(cli, tmp_path)


def test_help_full_lists_every_option_and_the_notes(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["help", "tool", "call", "--full"])
    assert result.exit_code == 0
    out = result.stdout
    for fragment in ("USAGE\n  canal tool call [OPTIONS] NAME", "--args  text, optional, default '{}'",
                     "--confirm  text, optional", "--json  flag", "NOTES (edge cases, security)",
                     "never argv", "EXIT CODES\n  0  success"):
        assert fragment in out
    assert "Sentinel" not in out


def test_help_without_full_is_level_one(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["help", "tool", "meta"])
    assert result.stdout.startswith("Usage: ")
    assert "canal tool meta create_project --required-only" in result.stdout


def test_help_unknown_command(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["help", "nope"])
    assert result.exit_code == 2
    assert "canal help" in result.stderr


def test_discover_and_tool_list_refuse_a_description_with_a_carriage_return(runner: CliRunner,
                                                                            project: Path) -> None:
    """Issue 39, finding 5: the description reached index.txt and canal tool list with its \\r."""
    (project / "tools" / "sneaky.yaml").write_text('run: [echo]\ndescription: "safe\\r\\u202eevil"\n')
    for argv in (["discover"], ["tool", "list"]):
        result = runner.invoke(cli, argv)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert "tools/sneaky.yaml:2: description: " in result.stderr
        assert "must be one line of visible text" in result.stderr
        assert "\\r, \\u202e" in result.stderr
    assert not (project / ".canal" / "discover" / "index.txt").exists()


def test_a_refusal_goes_to_stderr_like_canal_run(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """A denied call is a refusal, as a confirmation is: both on stderr, stdout left to what ran."""
    denied = _fake_result("denied", text="POLICY_DENIED\nrm matches rule x. Nothing was run.\n")
    monkeypatch.setattr(Canal, "run_argv", lambda *a, **kw: denied)
    result = runner.invoke(cli, ["tool", "call", "clean_build", "--args", '{"dir": "build"}'])
    assert result.exit_code == 121
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == "POLICY_DENIED"
