"""What a person is shown is what runs: commands, paths and names with every character that moves the
cursor or hides text written out visibly (``\\r``, ``\\x1b``, ``\\u2028``), and paths quoted as git
quotes them in a patch.

Hidden characters are the Unicode categories Cc (C0, DEL, C1 such as U+0085), Cf (bidi embeddings,
overrides and isolates, zero-width characters, U+FEFF, tags), Zl and Zp (U+2028, U+2029), and Cs (lone
surrogates, which is how Python spells a file name's bytes that are not UTF-8). Printable ASCII is never
touched, so an ordinary command is shown exactly as typed; a backslash stays a backslash.
"""

from __future__ import annotations

import re
import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NAMED = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}
_NOT_ASCII_PRINTABLE = re.compile(r"[^ -~]")
# git's quote_c_style with core.quotePath: these bytes stay as they are, the rest are escaped
_GIT_PLAIN = frozenset(range(0x20, 0x7F)) - {ord('"'), ord("\\")}
_GIT_NAMED = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
              ord('"'): '\\"', ord("\\"): "\\\\"}


def is_hidden(char: str) -> bool:
    """A character that moves the cursor, changes direction or shows nothing."""
    return unicodedata.category(char) in HIDDEN_CATEGORIES


def hidden_in(text: str) -> list[str]:
    """The hidden characters of ``text``, each once, in order, written visibly (for error messages)."""
    found = dict.fromkeys(c for c in _NOT_ASCII_PRINTABLE.findall(text) if is_hidden(c))
    return [_escape(c) for c in found]


def refuse_hidden(text: str, what: str) -> str:
    """``text`` when it holds no hidden character, else a ValueError naming them (for validators of
    text that is shown as one line: descriptions)."""
    found = hidden_in(text)
    if found:
        msg = f"{what} must be one line of visible text (it is what lists show); it holds {', '.join(found)}"
        raise ValueError(msg)
    return text


def visible(text: str) -> str:
    """``text`` with each hidden character written as its escape; everything else as it is."""
    return _NOT_ASCII_PRINTABLE.sub(lambda m: _escape(m.group()) if is_hidden(m.group()) else m.group(), text)


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    return f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


def git_quoted(path: str) -> str:
    """``path`` as git writes it in a patch header: as it is when plain, else in double quotes with
    C-style escapes and every byte outside printable ASCII in octal (what ``git apply`` reads back).
    Bytes that are not UTF-8 (surrogate escapes) are written as the bytes they were."""
    raw = path.encode("utf-8", "surrogateescape")
    if all(b in _GIT_PLAIN for b in raw):
        return path
    return '"' + "".join(_git_byte(b) for b in raw) + '"'


def _git_byte(byte: int) -> str:
    if byte in _GIT_PLAIN:
        return chr(byte)
    return _GIT_NAMED.get(byte, f"\\{byte:03o}")
