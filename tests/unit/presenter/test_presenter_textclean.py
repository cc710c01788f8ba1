"""Long text outputs are redacted block by block, with every line where it was."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from canal.host.redact import Redactor
from canal.presenter import textclean
from canal.presenter.binclean import NotRedactable
from canal.presenter.scan import scan
from canal.presenter.store import OutputStore
from canal.presenter.textclean import clean_text_stream
from canal.presenter.view import save_stream

TOKEN = "ghp_" + "a1B2" * 9
KEY = ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7bq9" * 3 + "\nAbCdEf0123456789+/ZZ\n"
       "-----END RSA PRIVATE KEY-----")


def clean(data: bytes, chunk: int) -> bytes:
    redact = Redactor(b"k" * 32).redact_keep_lines
    return b"".join(clean_text_stream(io.BytesIO(data), redact, chunk))


def log(lines: int, secrets: dict[int, str]) -> bytes:
    """Numbered log lines; ``secrets`` puts a secret after the text of some lines (by number)."""
    return "".join(f"line {i} of the build log{' ' + secrets[i] if i in secrets else ''}\n"
                   for i in range(1, lines + 1)).encode()


@pytest.mark.parametrize("chunk", [64, 1000, 4096, 1 << 20])
def test_secrets_go_at_every_cut_and_every_line_stays_where_it_was(monkeypatch: pytest.MonkeyPatch,
                                                                   chunk: int) -> None:
    monkeypatch.setattr(textclean, "OVERLAP", 300)  # many cuts in a small text
    secrets = {i: TOKEN for i in range(3, 2000, 37)} | {i: KEY for i in range(50, 2000, 211)}
    data = log(2000, secrets) + b"last line, no line break " + TOKEN.encode()
    out = clean(data, chunk)
    assert TOKEN.encode() not in out
    assert b"MIIEowIBAAKCAQEA" not in out
    assert b"AbCdEf0123456789" not in out
    assert out.count(b"\n") == data.count(b"\n")
    assert out == Redactor(b"k" * 32).redact_keep_lines(data.decode()).encode()  # as if in one piece
    raw_lines, clean_lines = data.split(b"\n"), out.split(b"\n")
    for number, (before, after) in enumerate(zip(raw_lines, clean_lines, strict=True), 1):
        if b"ghp_" not in before and b"KEY" not in before and b"AbCdEf" not in before \
                and b"MIIE" not in before:
            assert after == before, number


def test_a_key_across_a_cut_is_seen_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textclean, "OVERLAP", 100)
    data = log(40, {}) + KEY.encode() + b"\n" + log(3, {})
    cut_inside_the_key = len(log(40, {})) + 40
    out = clean(data, cut_inside_the_key)
    assert b"MIIEowIBAAKCAQEA" not in out
    assert b"AbCdEf0123456789" not in out
    assert out.count(b"\n") == data.count(b"\n")


def test_a_line_longer_than_the_cap_is_redacted_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textclean, "MAX_LINE", 5000)
    words = " ".join(f"word{i}" for i in range(3000))
    data = f"first\n{words} {TOKEN} {words} {TOKEN}\nlast\n".encode()
    out = clean(data, 1024)
    assert TOKEN.encode() not in out
    assert out.count(b"\n") == 3
    assert out.startswith(b"first\nword0 word1 ")
    assert out.endswith(b" word2999 " + out.split(b" ")[-1].split(b"\n")[0] + b"\nlast\n")


def test_bytes_that_are_not_utf8_pass_through() -> None:
    data = b"caf\xe9 \xff\xfe\n" + f"token {TOKEN}\n".encode() + b"\xc3\x28\n"
    out = clean(data, 8)
    assert out.startswith(b"caf\xe9 \xff\xfe\n")
    assert out.endswith(b"\xc3\x28\n")
    assert TOKEN.encode() not in out


def test_a_redactor_that_loses_lines_is_refused() -> None:
    with pytest.raises(NotRedactable):
        b"".join(clean_text_stream(io.BytesIO(b"a\nb\n"), lambda text: text.replace("\n", " "), 1024))


def test_a_block_larger_than_the_line_cap_is_cut_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textclean, "MAX_LINE", 5000)
    words = " ".join(f"word{i}" for i in range(20000))
    data = f"first\n{words} {TOKEN} {words}".encode()  # the last line has no line break: it never ends
    pieces: list[int] = []
    redactor = Redactor(b"k" * 32).redact_keep_lines

    def redact(text: str) -> str:
        pieces.append(len(text))
        return redactor(text)

    out = b"".join(clean_text_stream(io.BytesIO(data), redact, 1 << 20))
    assert TOKEN.encode() not in out
    assert out.count(b"\n") == 1
    assert out.startswith(b"first\nword0 ")
    assert out.endswith(b" word19999")
    assert max(pieces) <= 5000  # the line, read in one 1 MiB block, reached the detector in pieces


class CountingReader(io.BytesIO):
    """Counts the bytes read from it, whichever way."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.read_bytes = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer: bytearray | memoryview, /) -> int:  # type: ignore[override]
        n = super().readinto(buffer)
        self.read_bytes += n
        return n


def test_a_spooled_output_saved_redacted_is_read_once_and_indexed_as_a_scan(tmp_path: Path) -> None:
    # the index (line count, head and tail) was a second pass over the spool after saving it
    data = log(3000, {7: TOKEN, 2990: TOKEN})
    src = CountingReader(data)
    store = OutputStore(tmp_path, "/out", redact_saved=Redactor(b"k" * 32).redact_keep_lines)
    index, saved, error = save_stream(src, None, store, ".txt", (5, 7), 4096)
    assert (saved, error) == (f"/out/{next(tmp_path.iterdir()).name}", "")
    assert index == scan(io.BytesIO(data), head=5, tail=7, chunk_bytes=4096)
    assert src.read_bytes == len(data)
    assert TOKEN.encode() not in next(tmp_path.iterdir()).read_bytes()
