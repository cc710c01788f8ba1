"""``canal run`` end to end on a real engine: policy, confirmation, backup, exec, presenter, audit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from canal.cli.words import say as cli_words
from canal.host.audit import verify_log
from canal.runtime.api import Canal
from canal.runtime.services import AUDIT_PURPOSE


def events(canal: Canal) -> list[dict[str, object]]:
    return [json.loads(line) for line in canal._services.audit.path.read_text().splitlines()]


def test_allowed_command_runs_as_uid_1000_and_is_audited(canal: Canal) -> None:
    result = canal.run("id -u; echo made > made.txt; cat made.txt", say=cli_words)
    assert result.status == "ok", result.text
    assert result.output.split() == ["1000", "made"]
    footer = r"\[exit:0 \| \d+\.\d\ds \| checkpoint cp-\d+ \(undo: canal undo cp-\d+\)\]$"
    assert re.search(footer, result.text)
    assert (canal.project_dir / "made.txt").read_text() == "made\n"
    recs = events(canal)
    started = next(r for r in reversed(recs) if r["event"] == "run.started")
    completed = next(r for r in reversed(recs) if r["event"] == "run.completed")
    assert started["data"]["command"] == "id -u; echo made > made.txt; cat made.txt"  # type: ignore[index]
    assert completed["data"]["started"] == f"a-{started['seq']:06d}"  # type: ignore[index]
    assert completed["data"]["exit_code"] == 0  # type: ignore[index]
    assert f"a-{completed['seq']:06d}" == result.audit_id


def test_default_image_has_bash_5(canal: Canal) -> None:
    result = canal.run("echo ${BASH_VERSINFO[0]}")
    assert int(result.output.strip()) >= 5


def test_destructive_command_waits_for_confirmation_then_backs_up(canal: Canal) -> None:
    build = canal.project_dir / "build"
    asked = canal.run("rm -rf build", say=cli_words)
    assert asked.status == "confirmation_required"
    assert asked.process_exit_code() == 120
    assert asked.text.startswith("CONFIRMATION_REQUIRED\n")
    assert asked.confirmation is not None
    token = asked.confirmation.token
    assert f"canal run --confirm {token} -- rm -rf build" in asked.text
    assert (build / "out.bin").exists(), "nothing may run before confirmation"

    done = canal.run("rm -rf build", confirm=token, say=cli_words)
    assert done.status == "ok", done.text
    assert not build.exists()
    assert [b.path for b in done.backups] == ["build"]
    assert "canal restore" in done.text

    canal._services.trash.restore(done.backups[0].trash_id)
    assert (build / "out.bin").read_bytes() == b"\x00artifact\x01"

    with pytest.raises(Exception, match="already used") as reused:
        canal.run("rm -rf build", confirm=token)
    assert getattr(reused.value, "code", "") == "APPROVAL_REUSED"


def test_token_for_another_command_is_refused(canal: Canal) -> None:
    token = canal.run("rm -rf build").confirmation.token  # type: ignore[union-attr]
    with pytest.raises(Exception) as other:  # noqa: PT011 - the code is what matters
        canal.run("rm -rf notes.txt", confirm=token)
    assert getattr(other.value, "code", "") == "APPROVAL_MISMATCH"
    assert (canal.project_dir / "notes.txt").exists()
    with pytest.raises(Exception) as forged:  # noqa: PT011
        canal.run("rm -rf build", confirm="c_aaaaaaaaaaaa")
    assert getattr(forged.value, "code", "") == "APPROVAL_FORGED"


def test_unattended_denies_what_would_need_confirmation(canal: Canal) -> None:
    result = canal.run("rm -rf build", unattended=True)
    assert result.status == "denied"
    assert result.process_exit_code() == 121
    assert result.text.startswith("POLICY_DENIED\n")
    assert (canal.project_dir / "build").exists()


def test_overflow_path_is_greppable_from_the_next_run(canal: Canal) -> None:
    first = canal.run("seq 1 100000")
    assert first.output_file is not None
    assert "[... 99930 lines truncated. Full output: " in first.text
    second = canal.run(f"grep -n '^99999$' {first.output_file}")
    assert second.output.strip() == "99999:99999"
    host_copy = canal._services.outputs_dir("default") / Path(first.output_file).name
    assert host_copy.stat().st_mode & 0o777 == 0o600


def test_sandbox_cannot_write_its_output_folder(canal: Canal) -> None:
    result = canal.run("touch /canal/output/x")
    assert result.status == "failed"
    assert "Read-only file system" in result.stderr


def test_audit_log_verifies_then_names_the_edited_line(canal: Canal) -> None:
    canal.run("true")
    keys = canal._services.keys
    key, key_id = keys.derive(AUDIT_PURPOSE), keys.primary_id
    log = canal._services.audit.path
    assert verify_log(log, key, key_id).ok
    lines = log.read_text().splitlines(keepends=True)
    original = log.read_bytes()
    try:
        lines[2] = lines[2].replace('"actor":"agent"', '"actor":"admin"', 1)
        log.write_text("".join(lines))
        report = verify_log(log, key, key_id)
        assert report.problem is not None
        assert (report.problem.line, report.problem.kind) == (3, "edited")
        lines = original.decode().splitlines(keepends=True)
        log.write_text("".join(lines[:3] + lines[4:]))
        report = verify_log(log, key, key_id)
        assert report.problem is not None
        assert report.problem.line == 4
        assert report.problem.kind in ("deleted", "reordered")
        log.write_text("".join([*lines[:2], lines[3], lines[2], *lines[4:]]))
        report = verify_log(log, key, key_id)
        assert report.problem is not None
        assert report.problem.line == 3
        assert report.problem.kind == "reordered"
    finally:
        log.write_bytes(original)
    assert verify_log(log, key, key_id).ok
