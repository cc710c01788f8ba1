from __future__ import annotations

import gzip
import io
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from presenter_helpers import Present, host_path

from canal.presenter.sniff import classify


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height)))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def test_png_on_stdout_is_described_and_saved_never_shown(show: Present, output_dir: Path) -> None:
    data = png(64, 32)
    p = show(data)
    assert p.binary
    assert p.sniffed_type == "PNG image, 64x32"
    assert "PNG" in p.output
    assert "\x89" not in p.text
    assert "IHDR" not in p.text
    assert p.output.startswith(f"[binary output not shown: PNG image, 64x32, {len(data)} bytes. Saved to ")
    assert p.output_file is not None
    assert p.output_file.endswith(".bin")
    assert f"file {p.output_file}" in p.output
    assert f"xxd {p.output_file} | head -20" in p.output
    assert host_path(output_dir, p.output_file).read_bytes() == data
    assert p.text.endswith("\n[exit:0 | 1.23s]")


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.txt", "hello")
    return buf.getvalue()


@pytest.mark.parametrize(("data", "label"), [
    (gzip.compress(b"hello" * 100, mtime=0), "gzip data"),
    (_zip(), "zip archive"),
    (b"\x7fELF\x02\x01\x01" + b"\x00" * 64, "ELF executable"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 4, "PDF document"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "JPEG image"),
    (b"some text\x00with a NUL", "binary data"),
    (bytes(range(1, 32)) * 50, "binary data"),
])
def test_binary_types_are_sniffed(data: bytes, label: str) -> None:
    kind = classify(data, 0.3)
    assert kind is not None
    assert kind.label == label


@pytest.mark.parametrize("data", [
    b"MZ is the start of this line of text\n",
    b"%PDF-like words in a text file\n",
    "caf\u00e9 na\u00efve \u20ac\n".encode() * 100,
    b"colour \x1b[31mred\x1b[0m\r\n" * 50,
    b"latin-1 caf\xe9 and more plain ascii words here\n",
    b"",
])
def test_text_is_not_binary(data: bytes) -> None:
    assert classify(data, 0.3) is None


def test_utf8_character_cut_by_the_sample_end_is_still_text() -> None:
    sample = ("€" * 3000).encode()[:8191]
    assert classify(sample, 0.01) is None


def test_gzip_hint_names_the_next_command(show: Present) -> None:
    p = show(gzip.compress(b"log line\n" * 1000))
    assert f"zcat {p.output_file} | head -50" in p.output
