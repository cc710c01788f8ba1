"""Bytes to clean text: UTF-8 with replacement characters, no terminal escapes, progress bars collapsed."""

from __future__ import annotations

import re

# ECMA-48 escapes: OSC (titles, hyperlinks), DCS/PM/APC strings, CSI (colours, cursor moves, erase),
# two-byte escapes (charset, keypad), and the one-byte C1 CSI. Each may be cut off at the end of a line.
_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
)
# Controls that are noise to a reader (tab stays; newline and carriage return are handled apart).
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]")


def decode(raw: bytes) -> str:
    """UTF-8, with U+FFFD for every byte that is not valid UTF-8; never raises."""
    return raw.decode("utf-8", "replace")


def clean_line(line: str) -> str:
    """One line (no newline) as a terminal would finally show it, without colours or cursor codes."""
    line = _ANSI.sub("", line).rstrip("\r")
    if "\r" in line:
        # A progress bar redraws with \r: keep its last non-empty state.
        states = [s for s in line.split("\r") if s]
        line = states[-1] if states else ""
    return _CONTROLS.sub("", line)


def clean_text(text: str) -> str:
    """Several lines; a final newline is dropped, CRLF counts as one line end."""
    if text.endswith("\n"):
        text = text[:-1]
    return "\n".join(clean_line(line) for line in text.split("\n"))


def clip_utf8(text: str, limit: int) -> str:
    """At most ``limit`` bytes of UTF-8, never cutting a character in half."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")
