"""A run's spool files are deleted once its output is presented (runtime.run.spooled)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.redact import Redactor
from canal.presenter import PresenterConfig, present
from canal.runtime.run import spooled
from canal.runtime.run.spooled import drop_spools, release_spools
from canal.sandbox.result import CapturedOutput, ExecResult

TOKEN = "ghp_" + "a1B2" * 9


def spooled_run(folder: Path, body: bytes) -> ExecResult:
    folder.mkdir(parents=True, exist_ok=True)
    spool = folder / "stdout-x.out"
    spool.write_bytes(body)
    return ExecResult(stdout=CapturedOutput(size=len(body), path=spool, sha256="s"),
                      stderr=CapturedOutput.of(b""), exit_code=0, duration_s=0.1)


def shown_and_released(folder: Path, body: bytes) -> tuple[ExecResult, Path]:
    result = spooled_run(folder, body)
    redactor = Redactor(b"k" * 32)
    shown = present(result, config=PresenterConfig(), output_dir=folder, sandbox_output_dir="/o",
                    redact=redactor, redact_saved=redactor.redact_keep_lines)
    assert shown.output_file is not None
    return release_spools(result, shown, folder), folder / shown.output_file.removeprefix("/o/")


BODY = b"".join(b"line %d\n" % i for i in range(500)) + f"token {TOKEN}\n".encode()


def test_the_spool_goes_and_the_result_keeps_the_bytes(tmp_path: Path) -> None:
    released, saved = shown_and_released(tmp_path, BODY)
    assert sorted(p.name for p in tmp_path.iterdir()) == [saved.name]  # the spool is gone
    assert released.stdout.path is None
    assert released.stdout.read_bytes() == BODY  # as the command printed it (a workflow step reads it)
    assert released.stdout.sha256 == "s"
    assert TOKEN.encode() not in saved.read_bytes()


def test_past_the_memory_keep_the_result_points_at_the_redacted_copy(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spooled, "KEEP_IN_MEMORY", 1000)
    released, saved = shown_and_released(tmp_path, BODY)
    assert sorted(p.name for p in tmp_path.iterdir()) == [saved.name]
    assert released.stdout.path == saved
    assert released.stdout.size == len(BODY)


def test_a_stream_held_in_memory_is_left_as_it_is(tmp_path: Path) -> None:
    result = ExecResult(stdout=CapturedOutput.of(b"hi\n"), stderr=CapturedOutput.of(b""), exit_code=0,
                        duration_s=0.1)
    shown = present(result, config=PresenterConfig(), output_dir=tmp_path)
    assert release_spools(result, shown, tmp_path) is result


def test_when_presenting_fails_the_spools_go_all_the_same(tmp_path: Path) -> None:
    result = spooled_run(tmp_path, BODY)
    drop_spools(result)
    drop_spools(result)  # already gone: nothing to do
    assert list(tmp_path.iterdir()) == []
