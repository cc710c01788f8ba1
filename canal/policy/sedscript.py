"""Whether a GNU sed script only prints: no ``w``/``W`` (or ``s///w``) writing, no ``e`` (or ``s///e``)
running, no ``r``/``R`` reading another file, the way sed itself reads the script.

sed ends a regex or an ``s``/``y`` part at the first unescaped delimiter (brackets do not hide one), a
label or a filename at the end of the line or a ``;``, and ``a``/``i``/``c`` text at the end of the line.
Anything this reader does not know (a command letter, an unterminated part) is not "only prints".
"""

from __future__ import annotations

_SIMPLE = frozenset("pPnNdDgGhHxz=F{}")
_NUMBERED = frozenset("lqQL")
_LABELS = frozenset("btT:")
_TEXT = frozenset("aic")
_S_FLAGS = "gpiImM0123456789"


class _Unsafe(Exception):
    """The script does something besides printing, or this reader cannot tell."""


def only_prints(script: str) -> bool:
    try:
        _Reader(script).run()
    except _Unsafe:
        return False
    return True


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def run(self) -> None:
        while True:
            self.skip(" \t\n;")
            if not self.peek():
                return
            self.address()
            self.skip(" \t")
            if self.peek() == ",":
                self.i += 1
                self.skip(" \t")
                self.address(second=True)
            self.skip(" \t!")
            self.command()

    def skip(self, chars: str) -> None:
        while self.peek() and self.peek() in chars:
            self.i += 1

    def digits(self) -> None:
        while self.peek().isdigit():
            self.i += 1

    def address(self, *, second: bool = False) -> None:
        ch = self.peek()
        if ch.isdigit() or (second and ch in "+~"):
            self.i += 1
            self.digits()
            if self.peek() == "~":
                self.i += 1
                self.digits()
        elif ch == "$":
            self.i += 1
        elif ch in ("/", "\\"):
            if ch == "\\":
                self.i += 1
            self.part(self.peek())
            self.skip("IM")

    def part(self, delim: str) -> None:
        """From a delimiter to the next unescaped one (a backslash escapes the next character)."""
        if not delim or delim in "\n\\":
            raise _Unsafe
        self.i += 1
        while True:
            ch = self.peek()
            if not ch:
                raise _Unsafe
            self.i += 2 if ch == "\\" else 1
            if ch == delim:
                return

    def command(self) -> None:
        ch = self.peek()
        self.i += 1
        if ch in _SIMPLE:
            return
        if ch in _NUMBERED:
            self.skip(" \t")
            self.digits()
        elif ch in _LABELS:
            while self.peek() and self.peek() not in ";\n":
                self.i += 1
        elif ch in _TEXT:
            self.text_argument()
        elif ch in ("s", "y"):
            delim = self.peek()
            self.part(delim)
            self.i -= 1  # the closing delimiter opens the second part
            self.part(delim)
            if ch == "s":
                self.skip(_S_FLAGS)  # a w or e flag is left and refused below
        else:
            raise _Unsafe  # e, w, W, r, R, v and anything unknown

    def text_argument(self) -> None:
        while self.peek() and self.peek() != "\n":
            self.i += 2 if self.peek() == "\\" else 1
