"""Binary guard: is a stream text a model can read, and if not, what is it (from its magic bytes)?

A small table of well-known signatures is kept here rather than depending on libmagic: the sandbox
image has ``file`` for a full answer, and the hint tells the agent to run it.
"""

from __future__ import annotations

import codecs
import struct
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Kind:
    label: str
    hints: tuple[str, ...] = ()  # extra next commands; ``{path}`` is the saved file
    printable_magic: bool = False


_IMAGE_HINT = ("redirect it to a file in /workspace instead of printing it",)
_PREFIXES: tuple[tuple[bytes, Kind], ...] = (
    (b"\x89PNG\r\n\x1a\n", Kind("PNG image", _IMAGE_HINT)),
    (b"\xff\xd8\xff", Kind("JPEG image", _IMAGE_HINT)),
    (b"GIF87a", Kind("GIF image", _IMAGE_HINT)),
    (b"GIF89a", Kind("GIF image", _IMAGE_HINT)),
    (b"%PDF-", Kind("PDF document")),
    (b"\x1f\x8b", Kind("gzip data", ("zcat {path} | head -50",))),
    (b"PK\x03\x04", Kind("zip archive", ("python3 -m zipfile -l {path}",))),
    (b"PK\x05\x06", Kind("zip archive (empty)")),
    (b"\x7fELF", Kind("ELF executable")),
    (b"BZh", Kind("bzip2 data", ("bzcat {path} | head -50",))),
    (b"\xfd7zXZ\x00", Kind("xz data", ("xzcat {path} | head -50",))),
    (b"\x28\xb5\x2f\xfd", Kind("zstd data")),
    (b"7z\xbc\xaf\x27\x1c", Kind("7-zip archive")),
    (b"SQLite format 3\x00", Kind("SQLite database")),
    (b"\x00asm", Kind("WebAssembly module")),
    (b"\xca\xfe\xba\xbe", Kind("Java class or Mach-O universal binary")),
    (b"\xcf\xfa\xed\xfe", Kind("Mach-O executable")),
    (b"MZ", Kind("Windows executable (PE/DOS)")),
    (b"OggS", Kind("Ogg media")),
    (b"fLaC", Kind("FLAC audio")),
    (b"ID3", Kind("MP3 audio")),
    (b"\x1a\x45\xdf\xa3", Kind("Matroska/WebM video")),
    (b"wOFF", Kind("WOFF font")),
    (b"wOF2", Kind("WOFF2 font")),
)
_TAR = Kind("tar archive", ("tar -tvf {path} | head -50",), printable_magic=True)
_NOT_TEXT = Kind("binary data")
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\b\x1b")


def sniff(sample: bytes) -> Kind | None:
    """The type named by the first bytes, or None when no known signature matches."""
    for magic, kind in _PREFIXES:
        if sample.startswith(magic):
            printable = all(32 <= b < 127 for b in magic)
            return _with_size(replace(kind, printable_magic=printable), sample)
    if sample[257:262] == b"ustar":
        return _TAR
    if sample[:4] == b"RIFF" and sample[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        label = {b"WEBP": "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}[sample[8:12]]
        return Kind(label, printable_magic=True)
    if sample[4:8] == b"ftyp":
        return Kind("MP4/QuickTime media", printable_magic=True)
    return None


def _with_size(kind: Kind, sample: bytes) -> Kind:
    if kind.label == "PNG image" and sample[12:16] == b"IHDR" and len(sample) >= 24:
        width, height = struct.unpack(">II", sample[16:24])
        return replace(kind, label=f"PNG image, {width}x{height}")
    return kind


def classify(sample: bytes, threshold: float) -> Kind | None:
    """None for text; otherwise what the binary stream is (``binary data`` when unknown).

    A signature made only of printable ASCII (``%PDF-``, ``MZ``, ``GIF89a``...) can begin a line of
    text, so it names the type only when the bytes also fail the text test.
    """
    kind = sniff(sample)
    if kind is not None and not kind.printable_magic:
        return kind
    if _looks_binary(sample, threshold):
        return kind or _NOT_TEXT
    return None


def _looks_binary(sample: bytes, threshold: float) -> bool:
    if not sample:
        return False  # most commands print nothing: nothing to decode
    if b"\x00" in sample:
        return True
    # Decode incrementally so a character cut by the sample's end is not counted as invalid.
    chars = codecs.getincrementaldecoder("utf-8")("replace").decode(sample, final=False)
    if not chars:
        return False
    bad = sum(1 for c in chars if c == "\ufffd" or (c < " " and c not in _ALLOWED_CONTROLS) or c == "\x7f")
    return bad / len(chars) > threshold
