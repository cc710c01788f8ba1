"""The run pipeline over the in-package FakeBackend: ordering guarantees that need no Docker."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from canal.host.audit import AuditLog
from canal.presenter import PresenterConfig
from canal.presenter.early import EarlySave
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend, FakeReply
from canal.sandbox.result import ExecResult
from tests.error_codes import raises_code


@pytest.fixture
def canal(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "build").mkdir()
    return Canal(project, config=CanalConfig(), backend=FakeBackend())


def test_allowed_command_runs_between_its_intent_and_outcome_records(canal: Canal) -> None:
    result = canal.run("echo hello")
    assert result.status == "ok", result.text
    assert result.output == "hello"
    events = [line.split('"event":"')[1].split('"')[0]
              for line in canal._services.audit.path.read_text().splitlines()]
    assert events[-2:] == ["run.started", "run.completed"]


def test_no_intent_record_means_nothing_runs(canal: Canal) -> None:
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    canal.run("true")  # the sandbox exists and the log is open
    runs = len(backend.calls)
    log = canal._services.audit.path
    os.chmod(log, 0o400)
    if os.geteuid() == 0:  # root ignores file modes: fill the disk instead
        os.chmod(log, 0o600)
        log.unlink()
        log.symlink_to("/dev/full")
    with pytest.raises(Exception) as failed:  # noqa: PT011 - the code is what matters
        canal.run("echo must-not-run")
    assert getattr(failed.value, "code", "") in ("AUDIT_WRITE_FAILED", "AUDIT_LOG_CORRUPT")
    assert len(backend.calls) == runs


def test_confirmation_required_runs_nothing(canal: Canal) -> None:
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    before = len(backend.calls)
    asked = canal.run("rm -rf build")
    assert asked.status == "confirmation_required"
    assert len(backend.calls) == before
    assert (canal.project_dir / "build").is_dir()


def test_a_backup_that_fails_stops_the_confirmed_command(canal: Canal,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from canal.host.files.errors import FILE_IO_ERROR

    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    token = canal.run("rm -rf build").confirmation.token  # type: ignore[union-attr]

    def full_disk(*_: object, **__: object) -> None:
        msg = "No space left on device"
        raise FILE_IO_ERROR(msg)

    monkeypatch.setattr(canal._services.trash, "put", full_disk)
    before = len(backend.calls)
    with raises_code(FILE_IO_ERROR):
        canal.run("rm -rf build", confirm=token)
    assert len(backend.calls) == before
    assert (canal.project_dir / "build").is_dir()


def test_one_durable_write_per_command_the_intent(canal: Canal, monkeypatch: pytest.MonkeyPatch) -> None:
    canal.run("true")  # the log exists and has been opened
    syncs: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda fd: (syncs.append(fd), real(fd))[1])
    for _ in range(3):
        assert canal.run("true").status == "ok"
    assert len(syncs) == 3  # one per command: the intent, before the command ran
    lines = canal._services.audit.path.read_text().splitlines()
    assert lines[-1].count('"run.completed"') == 1  # the outcome is written, synced with the next intent
    canal.close()
    assert len(syncs) == 4  # closing puts the last outcome on disk


def test_a_ready_sandbox_is_not_asked_about(canal: Canal, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    canal.run("true")
    asked: list[str] = []
    real = backend.get
    monkeypatch.setattr(backend, "get", lambda name: (asked.append(name), real(name))[1])
    canal.run("true")
    assert asked == []


def test_over_long_command_is_refused_with_its_head_only(canal: Canal) -> None:
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    huge = "echo " + "x" * 2_000_000
    result = canal.run(huge)
    assert result.status == "denied"
    assert "2000005 characters" in result.text
    assert len(result.text) < 2_000
    assert not backend.calls
    log = canal._services.audit.path.read_text()
    assert "x" * 300 not in log
    assert "2000005 characters" in log


def test_decision_uses_the_session_cwd(canal: Canal) -> None:
    assert canal.run("cd /").status == "ok"
    denied = canal.run("rm -rf workspace")
    assert denied.status == "denied", denied.text
    assert "rm-root" in denied.decision.rule_ids


def test_session_path_change_is_seen_by_strict(tmp_path: Path, state_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "canal.yaml").write_text("policy:\n  profile: strict\n")
    fake = FakeBackend()
    strict = Canal(project, backend=fake)
    assert strict.run("ls").decision.action == "allow"
    fake.exec(strict.ref().container, "export PATH=/workspace/.bin:/usr/bin")  # as if confirmed earlier
    again = strict.run("ls")
    assert again.status == "confirmation_required", again.text
    assert "session-environment" in again.decision.rule_ids


def test_a_checkpoint_that_cannot_be_taken_stops_the_command(tmp_path: Path, state_dir: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Disk full, a broken store or a workspace over the caps: the command never runs unprotected."""
    from canal.host.checkpoints import WORKSPACE_TOO_BIG, CheckpointSettings

    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    for i in range(3):
        (project / "data" / f"{i}.txt").write_text("x")
    backend = FakeBackend()
    canal = Canal(project, config=CanalConfig(checkpoints=CheckpointSettings(max_files=2)), backend=backend)
    with raises_code(WORKSPACE_TOO_BIG, match="Nothing ran"):
        canal.run("python3 -c \"import shutil; shutil.rmtree('data')\"")
    assert backend.calls == []  # nothing reached the sandbox
    assert (project / "data" / "0.txt").exists()
    events = canal._services.audit.path.read_text()
    assert '"event":"run.refused"' in events
    assert '"event":"run.started"' not in events


def test_a_command_proven_read_only_runs_without_a_checkpoint(canal: Canal) -> None:
    """Only what the policy proves read-only skips the checkpoint; git then takes no optional lock
    (``git status`` would otherwise refresh .git/index behind the checkpoint's back)."""
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    listed = canal.run("echo hello")
    assert listed.status == "ok", listed.text
    assert listed.checkpoint is None
    assert backend.calls[-1].env.get("GIT_OPTIONAL_LOCKS") == "0"
    assert canal._services.checkpoints.list() == []
    wrote = canal.run("echo hello > listing.txt")
    assert wrote.checkpoint is not None
    assert backend.calls[-1].env.get("GIT_OPTIONAL_LOCKS") == "0"  # pinned for every command
    assert [c.id for c in canal._services.checkpoints.list()] == [wrote.checkpoint.id]


def test_a_refusal_says_how_to_check_it_with_the_session_state_it_was_decided_in(canal: Canal) -> None:
    """After `cd /`, `rm -rf workspace` is the whole project (deny); checked from /workspace it would only
    be confirmed. The hint's `canal policy check` carries the cwd (and the session's changed variables,
    and unattended) the decision used, so running it gives the same answer."""
    from canal.cli.words import say as cli_words

    assert canal.run("cd /").status == "ok"
    refused = canal.run("rm -rf workspace", say=cli_words)
    assert refused.status == "denied", refused.text
    [check] = [a for a in refused.next if a.kind == "policy.check"]
    assert check.args["cwd"] == "/"
    assert "canal policy check --cwd / -- rm -rf workspace " in refused.text
    late = canal.run("rm -rf /", unattended=True, say=cli_words)
    assert "canal policy check --cwd / --unattended -- rm -rf / " in late.text


def test_the_check_hint_carries_the_variables_the_session_changed(canal: Canal) -> None:
    from canal.cli.words import say as cli_words

    asked = canal.run("export PATH=/workspace/.bin:/usr/bin")
    assert asked.confirmation is not None
    assert canal.run("export PATH=/workspace/.bin:/usr/bin", confirm=asked.confirmation.token).status == "ok"
    refused = canal.run("rm -rf /", say=cli_words)
    assert "canal policy check --cwd /workspace --session-env PATH=/workspace/.bin:/usr/bin -- rm -rf / " \
        in refused.text, refused.text


class GateChecking(FakeBackend):
    """Records whether the intent record was on disk when the command would start."""

    def __init__(self) -> None:
        super().__init__()
        self.audit: AuditLog | None = None
        self.seen: list[tuple[bool, bool]] = []

    def exec(self, name: str, command: str | Sequence[str], **kw: Any) -> ExecResult:
        gate = kw.pop("gate", None)
        assert gate is not None
        assert self.audit is not None
        before = self.audit._synced < self.audit._written
        gate()
        after = self.audit._synced < self.audit._written
        self.seen.append((before, after))
        return super().exec(name, command, **kw)


def test_the_intent_is_on_disk_before_the_command_starts(tmp_path: Path, state_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The intent is written without its own fdatasync; the backend's gate, run before the command
    starts (while the request travels, in the Docker backend), puts it on disk."""
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    backend = GateChecking()
    canal = Canal(project, config=CanalConfig(), backend=backend)
    backend.audit = canal._services.audit
    assert canal.run("echo hi").status == "ok"
    assert backend.seen == [(True, False)]


# the early save (presenter/early.py) through the pipeline -------------------------------------------

TOKEN = "ghp_" + "a1B2" * 9
BIG = "".join(f"line {i} of the log{' token ' + TOKEN if i % 97 == 0 else ''}\n"
              for i in range(120_000)).encode()  # ~2.8 MB: spooled past the 1 MiB the fake holds


def saved(canal: Canal, ahead: bool, adopted: list[bool],
          monkeypatch: pytest.MonkeyPatch) -> bytes:
    resume = EarlySave.resume

    def spy(self: EarlySave, *args: Any) -> Any:
        done = resume(self, *args)
        adopted.append(done is not None)
        return done

    monkeypatch.setattr(EarlySave, "resume", spy)
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    backend.on("bigcat", lambda _call: FakeReply(stdout=BIG))
    result = canal.run("bigcat", presenter=PresenterConfig(save_while_running=ahead))
    assert result.status == "ok", result.text
    assert result.output_file is not None
    return (canal._services.outputs_dir(result.sandbox) / PurePosixPath(result.output_file).name).read_bytes()


def test_the_output_saved_while_it_arrives_is_the_one_saved_at_the_end(
        canal: Canal, monkeypatch: pytest.MonkeyPatch) -> None:
    ahead: list[bool] = []
    at_end: list[bool] = []
    early = saved(canal, True, ahead, monkeypatch)
    late = saved(canal, False, at_end, monkeypatch)
    assert ahead == [True]  # adopted
    assert at_end == []  # no early save at all
    assert early == late
    assert TOKEN.encode() not in early
    assert early.count(b"\n") == BIG.count(b"\n")


def test_the_checkpoint_is_linked_to_its_command_when_the_run_returns(canal: Canal) -> None:
    """The link is written while the command runs; by the time ``run`` returns it is on disk."""
    wrote = canal.run("echo hello > listing.txt")
    assert wrote.checkpoint is not None
    [record] = canal._services.checkpoints.list()
    started = [json.loads(line) for line in canal._services.audit.path.read_text().splitlines()
               if '"run.started"' in line][-1]
    assert record.audit_id == f"a-{started['seq']:06d}"
    assert started["data"]["checkpoint"] == record.id


def test_a_link_that_cannot_be_written_keeps_the_result_and_says_so(
        canal: Canal, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command has run when the link fails: its result is kept, and a notice says what happened."""
    from canal.host.checkpoints import CheckpointStore

    def broken(self: CheckpointStore, checkpoint: object, audit_id: str) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(CheckpointStore, "attach", broken)
    wrote = canal.run("echo hello > listing.txt")
    assert wrote.status == "ok", wrote.text
    assert wrote.checkpoint is not None
    [notice] = [n for n in wrote.notices if "not linked" in n]
    assert wrote.checkpoint.id in notice
    assert "No space left on device" in notice
