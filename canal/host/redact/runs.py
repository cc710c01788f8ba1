"""Runs of token characters (``[A-Za-z0-9+/_=-]``), found without a regex tried at every position.

The high-entropy detector's token is a whole run of these characters (a lookbehind and a lookahead
of the same class bound it), so it is enough to find the runs of at least the minimum length: the text
is mapped to one byte per character (``a`` for a token character, a space for anything else, ASCII or
not) and ``bytes.find`` of ``a`` * minimum jumps from run to run at memory speed. The same runs tell
the replacer where a token-shaped value can occur at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-")
_IN, _OUT = ord("a"), ord(" ")
_TABLE = bytes(_IN if chr(i) in TOKEN_CHARS else _OUT for i in range(256))
# ``a`` for a token character that is neither a hex digit nor ``=``: a run without one is a hex
# digest (or not a token at all), never a high-entropy finding
_NOT_HEX = bytes(_IN if chr(i) in TOKEN_CHARS - frozenset("0123456789abcdefABCDEF=") else _OUT
                 for i in range(256))


def token_map(text: str) -> bytes:
    """One byte per character of ``text``: ``a`` for a token character, a space for any other.

    Encoding with ``replace`` gives one ``?`` per character outside ASCII (lone surrogates included),
    so positions stay those of ``text``.
    """
    return text.encode("ascii", "replace").translate(_TABLE)


def token_maps(text: str) -> tuple[bytes, bytes]:
    """``token_map(text)``, and the same with ``a`` only for token characters other than hex digits
    and ``=``."""
    raw = text.encode("ascii", "replace")
    return raw.translate(_TABLE), raw.translate(_NOT_HEX)


def run_spans(mapped: bytes, min_len: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``runs(mapped, min_len)`` as two arrays, starts and ends, found over the whole map at once
    (the replacer looks up thousands of runs when base64 output gave thousands of values)."""
    import numpy as np  # only then: not at every process's start

    inside = np.zeros(len(mapped) + 2, np.int8)
    inside[1:-1] = np.frombuffer(mapped, np.uint8) == _IN
    edges = np.diff(inside)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    long = ends - starts >= min_len
    return starts[long], ends[long]


def runs(mapped: bytes, min_len: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each maximal run of token characters at least ``min_len`` long."""
    if min_len < 1:
        msg = "min_len must be at least 1"
        raise ValueError(msg)
    needle = b"a" * min_len
    size = len(mapped)
    at = mapped.find(needle)
    while at != -1:
        end = mapped.find(b" ", at + min_len)
        end = size if end == -1 else end
        yield at, end
        at = mapped.find(needle, end)
