"""Which parts of a text are already taken, for placing findings and replacements without overlap.

Checking each candidate against every span taken so far made placing n findings cost n^2 / 2
comparisons (8 MiB of base64 holds ~110,000 high-entropy tokens: minutes). Here the taken spans are
one byte per text position: asking whether a span is free is one ``memchr`` over its own length and
taking it one fill, so placing costs the total length of the candidates, however many spans are taken.
"""

from __future__ import annotations

_TAKEN = 1


class Spans:
    """Disjoint spans of a text of ``size`` characters; candidates are non-empty ``[start, end)``."""

    def __init__(self, size: int) -> None:
        self._used = bytearray(size)
        self.taken = 0

    def free(self, start: int, end: int) -> bool:
        return self._used.find(_TAKEN, start, end) == -1

    def take(self, start: int, end: int) -> None:
        self._used[start:end] = b"\x01" * (end - start)
        self.taken += 1

    def take_if_free(self, start: int, end: int) -> bool:
        if not self.free(start, end):
            return False
        self.take(start, end)
        return True
