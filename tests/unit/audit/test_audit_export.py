"""``canal audit export`` and ``canal audit verify --export``: a copy off the host holds the log's own lines
(chain hashes included); an edited copy fails on its own, a log rewritten after the copy fails against it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from canal.host.audit.record import canonical
from canal.runtime.services import Services
from canal.runtime.settings.project import find_project_dir


def run(cli: click.Group, *args: str) -> Result:
    return CliRunner().invoke(cli, ["audit", *args])


def export_to(cli: click.Group, path: Path, *args: str) -> Path:
    result = run(cli, "export", "--format", "jsonl", "-o", str(path), *args)
    assert result.exit_code == 0, result.output
    return path


def verify(cli: click.Group, copy: Path) -> Result:
    return run(cli, "verify", "--export", str(copy), "--json")


def problem(result: Result) -> dict[str, object]:
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)
    assert error["code"] == "AUDIT_TAMPERED"
    found: dict[str, object] = error["details"]["problem"]
    return found


@pytest.fixture(autouse=True)
def json_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    # the error boundary looks for --json in sys.argv, as the real console script sees it
    monkeypatch.setattr("sys.argv", ["canal", "--json"])


def test_the_copy_is_the_logs_own_lines_and_verifies(cli: click.Group, env: Path, tmp_path: Path) -> None:
    copy = export_to(cli, tmp_path / "copy.jsonl")
    assert copy.read_bytes() == env.read_bytes()
    assert copy.stat().st_mode & 0o777 == 0o600
    first = json.loads(copy.read_text().splitlines()[1])
    assert {"seq", "prev_hash", "digest", "hash", "key_id"} <= set(first)
    checked = verify(cli, copy)
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["export"] == {
        "status": "ok", "export": str(copy), "records": 4, "first": 1, "last": 4, "problem": None}


def test_stdout_and_a_partial_copy_chain_into_the_log(cli: click.Group, env: Path, tmp_path: Path) -> None:
    shown = run(cli, "export", "--after", "a-000002")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines() == env.read_text().splitlines()[2:]
    assert "exported 2 records (a-000003..a-000004, jsonl)" in shown.stderr
    copy = tmp_path / "tail.jsonl"
    copy.write_text(shown.stdout)
    assert verify(cli, copy).exit_code == 0
    since = run(cli, "export", "--since", "2000-01-01")
    assert since.stdout == env.read_text()
    future = run(cli, "export", "--since", "2999-01-01")
    assert future.stdout == ""
    assert "exported 0 records" in future.stderr


def test_an_edited_copy_fails(cli: click.Group, env: Path, tmp_path: Path) -> None:
    copy = export_to(cli, tmp_path / "copy.jsonl")
    lines = copy.read_text().splitlines()
    record = json.loads(lines[1])
    record["data"]["command"] = "ls"  # the approved rm -rf, made harmless in the copy
    copy.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    assert problem(verify(cli, copy))["kind"] == "edited"

    body = {k: v for k, v in record.items() if k not in ("digest", "hash")}
    record["digest"] = hashlib.sha256(canonical(body)).hexdigest()  # consistent again, but no key
    copy.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    assert problem(verify(cli, copy)) == {
        "line": 2, "kind": "forged", "message": "record 2 has an HMAC that this host's key did not make"}

    copy.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # a record dropped from the copy
    assert problem(verify(cli, copy))["kind"] == "deleted"


def test_a_log_rewritten_after_the_copy_fails_against_it(cli: click.Group, env: Path, tmp_path: Path) -> None:
    copy = export_to(cli, tmp_path / "copy.jsonl")
    # whoever holds the host key writes a new, self-consistent history in place of the old one
    env.unlink()
    log = Services(find_project_dir()).audit
    log.append("run.started", {"command": "ls", "sandbox": "default"})
    log.append("run.completed", {"started": "a-000002", "exit_code": 0})
    log.append("trash.put", {"path": "build/", "trash_id": "t1"})
    assert run(cli, "verify").exit_code == 0  # the rewritten log is intact on its own
    found = problem(verify(cli, copy))
    assert found["kind"] == "diverged"
    assert found["line"] == 1  # even the first record differs: it was written at another time


def test_a_log_cut_after_the_copy_fails_against_it(cli: click.Group, env: Path, tmp_path: Path) -> None:
    copy = export_to(cli, tmp_path / "copy.jsonl")
    lines = env.read_text().splitlines()
    env.write_text("\n".join(lines[:2]) + "\n")  # the last two records cut: the log alone cannot tell
    assert run(cli, "verify").exit_code == 0
    assert problem(verify(cli, copy)) == {
        "line": 3, "kind": "truncated",
        "message": "the log has no record 3, which the copy holds: the log lost records"}
    head = tmp_path / "head.jsonl"
    head.write_text("\n".join(copy.read_text().splitlines()[:2]) + "\n")
    assert verify(cli, head).exit_code == 0


def test_a_tampered_log_is_not_exported(cli: click.Group, env: Path, tmp_path: Path) -> None:
    lines = env.read_text().splitlines()
    env.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    result = run(cli, "export", "-o", str(tmp_path / "copy.jsonl"))
    assert result.exit_code == 1
    assert "AUDIT_TAMPERED" in result.stderr
    assert not (tmp_path / "copy.jsonl").exists()


@pytest.mark.parametrize("after", ["42", "b-000001", "a-"])
def test_after_takes_a_record_id(cli: click.Group, env: Path, after: str) -> None:
    result = run(cli, "export", "--after", after)
    assert result.exit_code == 2
    assert "CONFIG_INVALID" in result.stderr or "is not a record id" in result.stderr
