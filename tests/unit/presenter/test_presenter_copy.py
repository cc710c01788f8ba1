from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pytest

from canal.presenter.copy import copy_while


def _read_all(src: io.BufferedReader | io.BytesIO) -> bytes:
    return src.read()


def test_copies_a_file_while_the_work_reads_it(tmp_path: Path) -> None:
    data = os.urandom(300_000)
    (tmp_path / "src").write_bytes(data)
    with (tmp_path / "src").open("rb") as src, (tmp_path / "dest").open("wb") as dest:
        seen = copy_while(src, dest, 4096, lambda: _read_all(src))
    assert seen == data
    assert (tmp_path / "dest").read_bytes() == data


def test_falls_back_to_a_buffered_copy_when_the_kernel_refuses(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> int:
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(os, "copy_file_range", refuse)
    data = b"line\n" * 50_000
    (tmp_path / "src").write_bytes(data)
    with (tmp_path / "src").open("rb") as src, (tmp_path / "dest").open("wb") as dest:
        seen = copy_while(src, dest, 4096, lambda: _read_all(src))
    assert seen == data
    assert (tmp_path / "dest").read_bytes() == data


def test_copies_an_in_memory_stream(tmp_path: Path) -> None:
    src = io.BytesIO(b"abc\n" * 10_000)
    with (tmp_path / "dest").open("wb") as dest:
        assert copy_while(src, dest, 4096, lambda: _read_all(src)) == b"abc\n" * 10_000
    assert (tmp_path / "dest").read_bytes() == b"abc\n" * 10_000
