"""A long text output saved while it arrives (``early``): the same file, index and redactor calls as the
save at the end, nothing named before it is adopted, memory bounded, any doubt falls back."""

from __future__ import annotations

import base64
import os
import random
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from presenter_helpers import host_path, make_result

from canal.host.redact import Redactor
from canal.presenter import PresenterConfig, present, textclean
from canal.presenter import early as early_mod
from canal.presenter.binclean import NotRedactable
from canal.presenter.early import EarlySave
from canal.sandbox.spool import Spool, kept_as_it_came

CHUNK = 4096
CAP = 8192  # bytes the sandbox layer holds in memory before spooling
CONFIG = PresenterConfig(chunk_bytes=CHUNK)
TOKEN = "ghp_" + "a1B2" * 9
KEY = ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7bq9" * 3 + "\nAbCdEf0123456789+/ZZ\n"
       "-----END RSA PRIVATE KEY-----")


@pytest.fixture(autouse=True)
def _small_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textclean, "OVERLAP", 300)  # many cuts in a small text


def log(lines: int, every: int = 29) -> bytes:
    def secret(i: int) -> str:
        return "" if i % every else " " + (KEY if i % 7 == 0 else TOKEN)

    return "".join(f"line {i} of the build log{secret(i)}\n" for i in range(1, lines + 1)).encode()


def b64(size: int) -> bytes:
    return base64.encodebytes(random.Random(size).randbytes(size * 3 // 4))[:size]


class Recorder:
    """The saved-output redactor, with every text it was given (in order) and optional trouble."""

    def __init__(self, fail_in: str = "", hold: threading.Event | None = None) -> None:
        self._redact = Redactor(b"k" * 32).redact_keep_lines
        self.texts: list[str] = []
        self.fail_in = fail_in
        self.hold = hold
        self.entered = threading.Event()

    def __call__(self, text: str) -> str:
        self.entered.set()
        if self.hold is not None:
            assert self.hold.wait(30)
        if self.fail_in and threading.current_thread().name == self.fail_in:
            msg = "refused on this thread"
            raise NotRedactable(msg)
        self.texts.append(text)
        return self._redact(text)


def frames(data: bytes, seed: int) -> Iterator[bytes]:
    rng, at = random.Random(seed), 0
    while at < len(data):
        size = rng.choice([1, 100, 4095, 4096, 4097, 65536, rng.randrange(1, 20000)])
        yield data[at:at + size]
        at += size


def transfer(data: bytes, folder: Path, saver: EarlySave | None, max_bytes: int | None = None,
             cap: int = CAP) -> Spool:
    """The sandbox layer's part: each frame to the spool, then to ``on_output`` (the early save)."""
    spool = Spool(cap, folder / "spool", "stdout", max_bytes)
    for i, frame in enumerate(frames(data, len(data))):
        spool.write(frame)
        if saver is not None:
            saver.feed(frame)
        if i == 3 and saver is not None:
            threading.Event().wait(0.001)  # let the thread start on some blocks
    return spool


def save(data: bytes, folder: Path, redact: Callable[[str], str], *, early: bool,
         max_bytes: int | None = None, cap: int = CAP,
         stop_at: int | None = None) -> tuple[bytes, str, EarlySave]:
    """Saved bytes and the text shown, with or without the early save."""
    out_dir = folder / "output"
    saver = EarlySave(out_dir, redact, CONFIG, start_after=cap,
                      stop_at=stop_at if stop_at is not None else kept_as_it_came(max_bytes))
    try:
        spool = transfer(data, folder, saver if early else None, max_bytes, cap)
        shown = present(make_result(spool.finish()), config=CONFIG, output_dir=out_dir, redact=redact,
                        redact_saved=redact, early=saver if early else None)
    finally:
        saver.close()
    return host_path(out_dir, shown.output_file).read_bytes(), shown.text, saver


@pytest.mark.parametrize("data", [log(6000), b64(300_000), log(3000) + b64(50_000) + log(500)],
                         ids=["log", "base64", "mixed"])
def test_the_early_save_is_the_save_at_the_end_byte_for_byte(tmp_path: Path, data: bytes) -> None:
    late, early = Recorder(), Recorder()
    saved, shown, _ = save(data, tmp_path / "late", late, early=False)
    saved_early, shown_early, saver = save(data, tmp_path / "early", early, early=True)
    assert saver.cleaned > 0  # some blocks were cleaned ahead, and adopted
    assert saved_early == saved
    assert _without_paths(shown_early) == _without_paths(shown)
    assert early.texts == late.texts  # the same windows redacted, none twice
    assert TOKEN.encode() not in saved
    assert b"MIIEowIBAAKCAQEA7bq9" not in saved
    assert saved.count(b"\n") == data.count(b"\n")


def _without_paths(text: str) -> str:
    return re.sub(r"/canal/output/[\w.-]+", "PATH", text)


def test_a_key_across_the_point_where_the_save_resumes_is_seen_whole(tmp_path: Path) -> None:
    # the early save stops after three blocks; the save at the end carries on from the fourth
    head = b"".join(f"line {i}\n".encode() for i in range(2000))[:3 * CHUNK - 40]
    data = head + KEY.encode() + b"\n" + log(2000)
    saved, _, _ = save(data, tmp_path / "late", Recorder(), early=False)
    saved_early, _, saver = save(data, tmp_path / "early", Recorder(), early=True, stop_at=3 * CHUNK)
    assert saver.cleaned == 3 * CHUNK
    assert saved_early == saved
    assert b"MIIEowIBAAKCAQEA7bq9" not in saved_early
    assert b"AbCdEf0123456789" not in saved_early


def test_past_the_part_the_spool_keeps_as_it_came_nothing_is_cleaned_ahead(tmp_path: Path) -> None:
    data = log(20000)  # ~500 KB against a spool of 64 KiB: its middle is dropped
    saved, _, _ = save(data, tmp_path / "late", Recorder(), early=False, max_bytes=64 * 1024)
    saved_early, _, saver = save(data, tmp_path / "early", Recorder(), early=True, max_bytes=64 * 1024)
    assert b"bytes dropped here by Canal" in saved
    assert saved_early == saved
    assert 0 < saver.cleaned <= 32 * 1024


def test_binary_output_is_not_cleaned_ahead(tmp_path: Path) -> None:
    data = bytes(range(256)) * 400 + TOKEN.encode()
    redact = Recorder()
    saved, _, saver = save(data, tmp_path, redact, early=True)
    assert saver.cleaned == 0
    assert TOKEN.encode() not in saved


def test_an_output_held_in_memory_is_saved_as_before_and_the_early_work_dropped(tmp_path: Path) -> None:
    data = log(3000)
    saved, _, _ = save(data, tmp_path / "late", Recorder(), early=False, cap=1 << 20)
    early = Recorder()
    out_dir = tmp_path / "early" / "output"
    saver = EarlySave(out_dir, early, CONFIG, start_after=CAP, stop_at=None)  # starts, though held in memory
    spool = transfer(data, tmp_path / "early", saver, cap=1 << 20)
    shown = present(make_result(spool.finish()), config=CONFIG, output_dir=out_dir, redact=early,
                    redact_saved=early, early=saver)
    saver.close()
    assert saver.cleaned > 0
    assert host_path(out_dir, shown.output_file).read_bytes() == saved
    assert len(os.listdir(out_dir)) == 1  # the early work left no file


def test_nothing_is_named_before_the_save_is_adopted(tmp_path: Path) -> None:
    hold = threading.Event()
    redact = Recorder(hold=hold)
    out_dir = tmp_path / "output"
    saver = EarlySave(out_dir, redact, CONFIG, start_after=CAP, stop_at=None)
    transfer(log(3000), tmp_path, saver)
    assert redact.entered.wait(30)  # the thread is redacting its first block, into a file without a name
    assert os.listdir(out_dir) == []
    hold.set()
    saver.close()
    assert os.listdir(out_dir) == []


def test_the_backlog_is_bounded_and_the_save_at_the_end_does_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(early_mod, "MAX_BACKLOG", 4 * CHUNK)
    data = log(20000)
    saved, _, _ = save(data, tmp_path / "late", Recorder(), early=False)
    hold = threading.Event()
    redact = Recorder(hold=hold)
    out_dir = tmp_path / "early" / "output"
    saver = EarlySave(out_dir, redact, CONFIG, start_after=CAP, stop_at=None)
    spool = transfer(data, tmp_path / "early", saver)
    waiting = saver.backlog
    hold.set()
    shown = present(make_result(spool.finish()), config=CONFIG, output_dir=out_dir, redact=redact,
                    redact_saved=redact, early=saver)
    saver.close()
    assert waiting <= 4 * CHUNK
    assert 0 < saver.cleaned <= 5 * CHUNK
    assert host_path(out_dir, shown.output_file).read_bytes() == saved


@pytest.mark.parametrize("where", ["redactor", "write"])
def test_a_failure_ahead_falls_back_to_the_whole_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      where: str) -> None:
    data = log(6000)
    saved, _, _ = save(data, tmp_path / "late", Recorder(), early=False)
    if where == "write":  # a block cleaned, its bytes not written (a full disk): that work is not whole
        write_all, writes = early_mod._write_all, []

        def flaky(fd: int, chunk: bytes) -> None:
            writes.append(threading.current_thread().name)
            if writes.count("canal-early-save") == 3 and writes[-1] == "canal-early-save":
                raise OSError(28, "No space left on device")
            write_all(fd, chunk)

        monkeypatch.setattr(early_mod, "_write_all", flaky)
    redact = Recorder(fail_in="canal-early-save" if where == "redactor" else "")
    saved_early, _, _ = save(data, tmp_path / "early", redact, early=True)
    assert saved_early == saved
    assert len(os.listdir(tmp_path / "early" / "output")) == 1


def test_another_redactor_or_config_at_the_end_is_not_adopted(tmp_path: Path) -> None:
    data = log(6000)
    late = Recorder()
    saved, _, _ = save(data, tmp_path / "late", late, early=False)
    for name, config in (("redactor", CONFIG), ("config", CONFIG.model_copy(update={"head_lines": 10}))):
        folder = tmp_path / name
        ahead, at_end = Recorder(), Recorder()
        saver = EarlySave(folder / "output", ahead if name == "redactor" else at_end, config,
                          start_after=CAP, stop_at=None)
        spool = transfer(data, folder, saver)
        shown = present(make_result(spool.finish()), config=CONFIG, output_dir=folder / "output",
                        redact=at_end, redact_saved=at_end, early=saver)
        saver.close()
        assert saver.cleaned > 0
        assert host_path(folder / "output", shown.output_file).read_bytes() == saved
        assert at_end.texts[-len(late.texts):] == late.texts  # the whole save, at the end
        assert len(os.listdir(folder / "output")) == 1
