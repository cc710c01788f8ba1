from __future__ import annotations

import json
from pathlib import Path

import click
import click.testing
import pytest
from click.testing import CliRunner


def test_show_reads_well(cli: click.Group, env: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "show"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("a-000001 ")
    assert "audit.opened" in lines[0]
    assert "project_id=project-" in lines[0]
    assert lines[1].startswith("a-000002 ")
    assert "run.started" in lines[1]
    assert "$ rm -rf build/  [confirm rm-recursive | sandbox default | approved by alice]" in lines[1]
    assert "exit 0 exited 0.42s, 0 bytes sha256 e3b0c442 (for a-000001)" in lines[2]
    assert "path=build/ trash_id=t1" in lines[3]


def test_show_json_and_filters(cli: click.Group, env: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "show", "--json", "--event", "run.", "--since", "1h"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["event"] for r in data["records"]] == ["run.started", "run.completed"]
    assert data["records"][0]["id"] == "a-000002"
    old = CliRunner().invoke(cli, ["audit", "show", "--json", "--since", "2999-01-01"])
    assert json.loads(old.stdout)["records"] == []


def test_show_rejects_a_bad_since(cli: click.Group, env: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "show", "--since", "yesterday"])
    assert result.exit_code == 2
    assert result.stderr.startswith("INVALID_DURATION")


def test_verify_ok(cli: click.Group, env: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "verify"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok: 4 records intact")


def test_verify_names_the_edited_line(cli: click.Group, env: Path) -> None:
    env.write_bytes(env.read_bytes().replace(b'"exit_code":0', b'"exit_code":1'))
    result = CliRunner().invoke(cli, ["audit", "verify"])
    assert result.exit_code == 1
    assert result.stdout == ""
    first, message, hint = result.stderr.splitlines()
    assert first == "AUDIT_TAMPERED"
    assert "line 3: edited" in message
    assert hint.startswith("Next: ")


def invoke_json(cli: click.Group, args: list[str], monkeypatch: pytest.MonkeyPatch) -> click.testing.Result:
    # the error boundary looks for --json in sys.argv, as the real console script sees it
    monkeypatch.setattr("sys.argv", ["canal", *args])
    return CliRunner().invoke(cli, args)


def test_verify_json_on_tamper_carries_the_report(cli: click.Group, env: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    parts = env.read_bytes().splitlines(keepends=True)
    env.write_bytes(parts[0] + parts[2])
    result = invoke_json(cli, ["audit", "verify", "--json"], monkeypatch)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["code"] == "AUDIT_TAMPERED"
    assert data["details"]["problem"] == {"line": 2, "kind": "deleted",
                                          "message": "record 2 missing: record 3 follows record 1"}


def test_checkpoint_then_truncation(cli: click.Group, env: Path, tmp_path: Path) -> None:
    made = CliRunner().invoke(cli, ["audit", "checkpoint"])
    assert made.exit_code == 0, made.output
    assert "canal audit verify --checkpoint" in made.stderr
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(made.stdout)
    ok = CliRunner().invoke(cli, ["audit", "verify", "--checkpoint", str(cp_file)])
    assert ok.exit_code == 0, ok.output
    assert "matches the checkpoint at record 4" in ok.stdout
    env.write_bytes(b"".join(env.read_bytes().splitlines(keepends=True)[:3]))
    cut = CliRunner().invoke(cli, ["audit", "verify", "--checkpoint", str(cp_file)])
    assert cut.exit_code == 1
    assert "line 4: truncated" in cut.stderr


def test_checkpoint_refuses_a_tampered_log(cli: click.Group, env: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    env.write_bytes(env.read_bytes()[:-5])
    result = invoke_json(cli, ["audit", "checkpoint", "--json"], monkeypatch)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["details"]["problem"]["kind"] == "truncated"


def test_forged_checkpoint_is_a_usage_error(cli: click.Group, env: Path, tmp_path: Path) -> None:
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(CliRunner().invoke(cli, ["audit", "checkpoint"]).stdout.replace('"seq":4', '"seq":9'))
    result = CliRunner().invoke(cli, ["audit", "verify", "--checkpoint", str(cp_file)])
    assert result.exit_code == 2
    assert result.stderr.startswith("AUDIT_CHECKPOINT_INVALID")


def test_bad_master_key_is_reported(cli: click.Group, env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_KEY", "c2hvcnQ=")
    result = CliRunner().invoke(cli, ["audit", "verify"])
    assert result.exit_code == 2  # keys come from canal.host.keys.KeyStore
    assert result.stderr.startswith("KEY_ENV_INVALID")


def test_show_escapes_hidden_characters_of_a_command(cli: click.Group, env: Path) -> None:
    """Issue 39: what a person reads of a command is what ran, in the audit listing too."""
    from canal.runtime.services import Services
    from canal.runtime.settings.project import find_project_dir
    from tests.hidden_chars import HIDDEN, assert_shown_escaped

    Services(find_project_dir()).audit.append("run.started", {
        "sandbox": "default", "command": "rm -rf src # \r" + " " * 20 + "$ ls " + "".join(HIDDEN),
        "cwd": "/workspace"})
    result = CliRunner().invoke(cli, ["audit", "show", "--event", "run.started"])
    assert result.exit_code == 0, result.output
    assert "$ rm -rf src # \\r    " in result.stdout
    assert_shown_escaped(result.stdout)
