"""The run pipeline saves a long stdout while it arrives when its presenter config says so, and the
saved file is the one the save at the end makes."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any, Literal

import pytest

from canal.presenter import PresenterConfig
from canal.presenter import config as presenter_config
from canal.presenter.early import EarlySave
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend, FakeCall, FakeReply

TOKEN = "ghp_" + "a1B2" * 9
DATA = "".join(f"line {i} of the log{' token ' + TOKEN if i % 97 == 0 else ''}\n"
               for i in range(120_000)).encode()  # ~2.8 MB: spooled past the 1 MiB the fake holds


@pytest.fixture
def canal(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    backend = FakeBackend()

    def big(_call: FakeCall) -> FakeReply:
        return FakeReply(stdout=DATA)

    backend.on("bigcat", big)
    return Canal(project, config=CanalConfig(), backend=backend)


def saved(canal: Canal, mode: Literal["always", "never"], adopted: list[bool],
          monkeypatch: pytest.MonkeyPatch) -> bytes:
    resume = EarlySave.resume

    def spy(self: EarlySave, *args: Any) -> Any:
        done = resume(self, *args)
        adopted.append(done is not None)
        return done

    monkeypatch.setattr(EarlySave, "resume", spy)
    result = canal.run("bigcat", presenter=PresenterConfig(save_while_running=mode))
    assert result.status == "ok", result.text
    assert result.output_file is not None
    return (canal._services.outputs_dir(result.sandbox) / PurePosixPath(result.output_file).name).read_bytes()


def test_the_output_saved_while_it_arrives_is_the_one_saved_at_the_end(
        canal: Canal, monkeypatch: pytest.MonkeyPatch) -> None:
    ahead: list[bool] = []
    at_end: list[bool] = []
    early = saved(canal, "always", ahead, monkeypatch)
    late = saved(canal, "never", at_end, monkeypatch)
    assert ahead == [True]  # adopted
    assert at_end == []  # no early save at all
    assert early == late
    assert TOKEN.encode() not in early
    assert early.count(b"\n") == DATA.count(b"\n")


@pytest.mark.parametrize(("cpus", "expected"), [(2, False), (4, True), (16, True)])
def test_auto_saves_while_running_only_with_cores_to_spare(monkeypatch: pytest.MonkeyPatch, cpus: int,
                                                          expected: bool) -> None:
    monkeypatch.setattr(presenter_config.os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    assert PresenterConfig().saves_while_running() is expected
    assert PresenterConfig(save_while_running="always").saves_while_running() is True
    assert PresenterConfig(save_while_running="never").saves_while_running() is False
