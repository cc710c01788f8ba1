"""SWE-ReX uploads (canal/swerex/service.py): a zip is unpacked with Canal's file operations, and an
archive naming a path outside its target is refused whole, before anything of it is written."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.sandbox.fake import FakeBackend
from canal.swerex.service import VALUE_ERROR, SwerexError, SwerexService


def _zip(*entries: tuple[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, text in entries:
            archive.writestr(name, text)
    return buf.getvalue()


@pytest.fixture
def service(tmp_path: Path, state_dir: Path) -> SwerexService:
    project = tmp_path / "project"
    project.mkdir()
    return SwerexService(Canal(project, backend=FakeBackend()))


def test_an_archive_is_unpacked_under_its_target(service: SwerexService) -> None:
    service.upload("/workspace/up", _zip(("a.txt", "one"), ("sub/b.txt", "two")), unzip=True)
    root = Path(service.canal.project_dir)
    assert (root / "up" / "a.txt").read_text() == "one"
    assert (root / "up" / "sub" / "b.txt").read_text() == "two"


@pytest.mark.parametrize("bad", ["../evil.txt", "sub/../../evil.txt", "/etc/evil.txt"])
def test_a_name_outside_the_target_refuses_the_whole_archive(service: SwerexService, bad: str) -> None:
    root = Path(service.canal.project_dir)
    with pytest.raises(SwerexError) as refused:
        service.upload("/workspace/up", _zip(("a.txt", "one"), (bad, "x")), unzip=True)
    assert refused.value.class_path == VALUE_ERROR
    assert bad in refused.value.message
    assert sorted(p.name for p in root.iterdir()) == []  # nothing of it was written, not even a.txt
