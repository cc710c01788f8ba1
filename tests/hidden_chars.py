"""Every character the display views must show escaped: all C0 and C1 controls and DEL, the bidi
embeddings, overrides and isolates, and the zero-width, line and paragraph separators. Each view's test
feeds these through itself; ``escaped`` is how a person must see each one."""

from __future__ import annotations

C0 = [chr(c) for c in range(0x00, 0x20)]
C1 = [chr(0x7F), *(chr(c) for c in range(0x80, 0xA0))]
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
SEPARATORS = ["\u2028", "\u2029", "\u0085", *(chr(c) for c in range(0x200B, 0x2010)), "\ufeff"]
HIDDEN = list(dict.fromkeys(C0 + C1 + BIDI + SEPARATORS))
NAMED = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}


def escaped(char: str) -> str:
    if char in NAMED:
        return NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def leaked(shown: str) -> list[str]:
    """The hidden characters that reached ``shown`` raw (a newline is where a line ends)."""
    return sorted({escaped(c) for c in shown if c in HIDDEN and c != "\n"})


def assert_shown_escaped(shown: str, chars: list[str] = HIDDEN) -> None:
    """No hidden character reached ``shown``, and each one's escape did."""
    assert not leaked(shown), f"shown raw: {leaked(shown)}"
    missing = [escaped(c) for c in chars if escaped(c) not in shown]
    assert not missing, f"not shown escaped: {missing}"
