"""High-entropy tokens of a long text with the checks done over all its tokens at once (numpy).

The per-token detector (``entropy.high_entropy_tokens``) costs a few microseconds of Python per run of
24 or more token characters: ~7,000 per MiB of log output (digests, UUIDs, paths), ~14,000 per MiB of
base64, where every line is a finding. Here the same decisions are made over arrays:

- runs: the text's classes (``_CLASS``) one byte per character; 8-byte words made only of token
  characters are found with a bit trick, and a run of 23 or more holds two consecutive such words, so
  each group of two or more is one run, widened to its exact ends by the bytes of its two neighbours;
- a run without a lower-case letter, an upper-case letter and a digit is never random (``looks_random``):
  one ``bitwise_or`` per run drops nearly every run of log output (hex digests, UUIDs, paths);
- a few runs left go through the per-token checks; many (base64) are decided here: padding, the
  public prefixes (SRI digests, SSH keys) and PEM blocks, hex digests and UUIDs, the switch rate and
  the word-count bound as sums over each run, and the Shannon entropy from a count per symbol. A token
  whose entropy is within ``EPSILON`` of the threshold, or that might be made of words, is decided by
  the per-token code, so every decision is the per-token one exactly (tests/unit/redact/test_batch.py
  compares them on generated text).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from canal.host.redact import entropy

BATCH_MIN = entropy.BATCH_MIN  # characters: shorter texts take the per-token path
FEW = 32  # candidate runs: fewer are checked one by one
EPSILON = 1e-6  # bits: an entropy this close to the threshold is computed the per-token way
SLICE = 256 * 1024  # characters of text decided at once (bounds the arrays' memory)
Array = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]

# 0: not a token character, 1 lower, 2 upper, 3 digit, 4 "+/_-", 5 "="
_OTHER, _LOWER, _UPPER, _DIGIT, _SIGN, _PAD = range(6)


def _class_of(c: str) -> int:
    if "a" <= c <= "z":
        return _LOWER
    if "A" <= c <= "Z":
        return _UPPER
    if "0" <= c <= "9":
        return _DIGIT
    return _SIGN if c in "+/_-" else _PAD if c == "=" else _OTHER


_CLASS = bytes(_class_of(chr(i)) for i in range(256))
_BITS = np.array([0, 1, 2, 4, 0, 0, 0, 0], np.uint8)  # lower, upper, digit: all three = 7
# characters outside [0-9a-fA-F-] (and "="): a run without one may be a digest or a UUID
_NOT_HEXDASH = np.array([0 if chr(i) in "0123456789abcdefABCDEF-=" else 1 for i in range(256)], np.uint8)
# pairs of classes (first * 8 + second) that ``entropy._switch_rate`` and ``_word_starts`` count
_SWITCH = np.zeros(64, np.uint8)
for _a, _b in ((_LOWER, _UPPER), (_LOWER, _DIGIT), (_UPPER, _DIGIT), (_DIGIT, _LOWER), (_DIGIT, _UPPER)):
    _SWITCH[_a * 8 + _b] = 1
_WORD = np.zeros(64, np.uint8)
for _a, _b in ((_SIGN, _LOWER), (_SIGN, _UPPER), (_SIGN, _DIGIT), (_LOWER, _UPPER), (_DIGIT, _UPPER),
               (_DIGIT, _LOWER)):
    _WORD[_a * 8 + _b] = 1
# symbols for the entropy: each token character but "=" its own; 66 for "=" and 67 for the rest
_SYMBOL = np.full(256, 67, np.int32)
for _i, _c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"):
    _SYMBOL[ord(_c)] = _i
_SYMBOL[ord("=")] = 66
_SYMBOLS = 68
# per character and class of the next one, four counts in 16-bit lanes: a letter/digit switch, a
# word start, a character outside [0-9a-fA-F-=], a "="
_LANE = np.uint64(0xFFFF)
_LANES = np.zeros(256 * 8, np.uint64)
for _code in range(256):
    for _next in range(8):
        _pair = _CLASS[_code] * 8 + _next
        _LANES[_code * 8 + _next] = (int(_SWITCH[_pair]) | int(_WORD[_pair]) << 16
                                     | int(_NOT_HEXDASH[_code]) << 32 | (_code == ord("=")) << 48)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)


def high_entropy_tokens(text: str) -> list[tuple[int, int]]:
    """``entropy.high_entropy_tokens(text)``, the same spans in the same order."""
    raw = text.encode("ascii", "replace")  # one byte per character, "?" for any other
    classes = np.frombuffer(raw.translate(_CLASS), np.uint8)
    starts, ends = _runs(classes)
    upper = np.flatnonzero(classes == _UPPER)  # most runs of log output have none: drop them first
    at = np.searchsorted(upper, starts)
    keep = at < len(upper)
    keep[keep] = upper[at[keep]] < ends[keep]
    starts, ends = starts[keep], ends[keep]
    if len(starts) >= FEW:
        bits = np.empty(len(classes) + 1, np.uint8)
        np.take(_BITS, classes, out=bits[:-1], mode="clip")
        bits[-1] = 0
        bits = np.bitwise_or.reduceat(bits, _bounds(starts, ends, len(classes)))[::2]
        starts, ends = starts[bits == 7], ends[bits == 7]
    if not len(starts):
        return []  # most blocks of log output: no need to look for public PEM blocks
    public = entropy._public_blocks(text)
    if len(starts) < FEW:
        return [(s, e) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
                if entropy.is_finding(text, s, e, public)]
    return _decide(text, np.frombuffer(raw, np.uint8), classes, starts, ends, public)


def _runs(classes: Bytes) -> tuple[Array, Array]:
    """Start and end of every maximal run of token characters of at least ``MIN_TOKEN``."""
    size = len(classes)
    padded = np.zeros(8 + (size + 15) // 8 * 8, np.uint8)  # a zero word before, zeros after
    padded[8:8 + size] = classes
    words = padded.view(np.uint64)
    full = ((words & _LOW7) + _LOW7 | words) & _HIGH == _HIGH  # no zero byte: eight token characters
    edges = np.diff(full.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    first, last = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)  # groups [first, last)
    two = last - first >= 2  # a run of 23 or more holds two whole words
    first, last = first[two], last[two]
    # widened by the token characters at the end of the word before and the start of the word after
    # (neither is whole, so each has a zero byte)
    before = words[first - 1].view(np.uint8).reshape(-1, 8) == 0
    after = words[last].view(np.uint8).reshape(-1, 8) == 0
    starts = first * 8 - np.argmax(before[:, ::-1], axis=1) - 8
    ends = last * 8 + np.argmax(after, axis=1) - 8
    long = ends - starts >= entropy.MIN_TOKEN
    return starts[long].astype(np.int64), ends[long].astype(np.int64)


def _bounds(starts: Array, ends: Array, size: int) -> Array:
    """Indices for ``reduceat`` over an array of ``size + 1``: even results are the runs' sums."""
    out = np.empty(2 * len(starts), np.int64)
    out[0::2], out[1::2] = starts, ends
    return np.minimum(out, size)


def _decide(text: str, codes: Bytes, classes: Bytes, starts: Array, ends: Array,
            public: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Many candidate runs, decided over arrays a slice of the text at a time (memory stays small)."""
    out: list[tuple[int, int]] = []
    begin = 0
    while begin < len(starts):
        stop = int(np.searchsorted(ends, starts[begin] + SLICE, side="right"))
        stop = max(stop, begin + 1)
        low, high = int(starts[begin]), int(ends[stop - 1])
        sure, maybe = _checks(codes[low:high], classes[low:high], starts[begin:stop] - low,
                              ends[begin:stop] - low)
        out += _ordered(text, starts[begin:stop], ends[begin:stop], sure, maybe, public,
                        codes[starts[begin:stop]])
        begin = stop
    return out


def _checks(codes: Bytes, classes: Bytes, starts: Array, ends: Array) -> tuple[Mask, Mask]:
    """Which runs are findings for sure, and which may be (the per-token code decides those)."""
    # one sum per run over each character and the class of the next: four counts in 16-bit lanes
    # (a run of 65,536 or more is left to the per-token code). Pairs that hold a "=" count nothing,
    # so over ``[start, end - 1)`` they are those of the core; the last character is added apart
    pairs = codes[:-1] * np.uint16(8)
    pairs += classes[1:]
    lanes = np.empty(len(pairs) + 1, np.uint64)
    np.take(_LANES, pairs, out=lanes[:-1], mode="clip")  # in range: "clip" skips the checks
    lanes[-1] = 0
    sums = np.add.reduceat(lanes, _bounds(starts, ends - 1, len(pairs)))[::2]
    last = codes[ends - 1]
    switches, word_pairs = (sums & _LANE).astype(np.int64), ((sums >> 16) & _LANE).astype(np.int64)
    not_hexdash = ((sums >> 32) & _LANE).astype(np.int64) + _NOT_HEXDASH[last]
    pads = (sums >> 48).astype(np.int64) + (last == ord("="))
    # padding: at most two "=", all at the end; the core is the run without them
    trailing = np.zeros(len(starts), np.int64)
    for k in (1, 2, 3):
        trailing += (trailing == k - 1) & (classes[ends - k] == _PAD)
    cores = ends - pads
    lengths = cores - starts
    ok = (pads <= entropy.MAX_PADDING) & (pads == trailing) & (lengths >= entropy.MIN_TOKEN)
    rate_ok = switches / np.maximum(lengths - 1, 1) >= entropy.MIN_SWITCH_RATE
    first = classes[starts]
    words = ((first >= _LOWER) & (first <= _DIGIT)) + word_pairs
    shannon = _entropy(codes, classes, starts, ends, np.maximum(lengths, 1))
    ok &= rate_ok & (shannon > entropy.MIN_ENTROPY - EPSILON)
    sure = ok & (shannon >= entropy.MIN_ENTROPY + EPSILON) & (not_hexdash > 0) & (words * 4 > lengths)
    long = ends - starts >= 1 << 16  # its counts overflowed their lanes
    return sure & ~long, (ok & ~sure) | long


def _entropy(codes: Bytes, classes: Bytes, starts: Array, ends: Array,
             lengths: Array) -> npt.NDArray[np.float64]:
    """Shannon entropy of each run without its "=" (``lengths`` characters), from the count of each
    symbol in it."""
    sizes = ends - starts
    inside = classes != _OTHER  # the runs' characters, unless other runs of tokens lie between them
    if np.count_nonzero(inside) != sizes.sum():
        marks = np.zeros(len(codes) + 1, np.int8)
        marks[starts] = 1
        marks[ends] = -1
        inside = np.cumsum(marks[:-1], dtype=np.int8).view(np.bool_)
    keys = np.take(_SYMBOL, codes[inside], mode="clip")
    keys += np.repeat(np.arange(0, len(starts) * _SYMBOLS, _SYMBOLS, dtype=np.int32), sizes)
    counts = np.bincount(keys, minlength=len(starts) * _SYMBOLS).reshape(len(starts), _SYMBOLS)[:, :66]
    # H = log2(n) - sum(c log2 c) / n: the per-token sum differs in its last bits only (EPSILON)
    upto = np.arange(int(counts.max()) + 1, dtype=np.float64)
    c_log_c = upto * np.log2(np.maximum(upto, 1.0))
    sums = np.take(c_log_c, counts, mode="clip").sum(axis=1)
    shannon: npt.NDArray[np.float64] = np.log2(lengths) - sums / lengths
    return shannon


def _ordered(text: str, starts: Array, ends: Array, sure: Mask, maybe: Mask,
             public: list[tuple[int, int]], firsts: Bytes) -> list[tuple[int, int]]:
    """The findings in text order: the sure ones unless a public prefix (``sha...-``, ``AAAA...``) or
    a public block rules them out, and the unsure ones as the per-token code decides them."""
    chosen = sure.copy()
    prefixed = np.flatnonzero(sure & ((firsts == ord("s")) | (firsts == ord("A"))))
    for i, s, e in zip(prefixed.tolist(), starts[prefixed].tolist(), ends[prefixed].tolist(), strict=True):
        chosen[i] = not entropy.PUBLIC_TOKEN.match(text, s, e)
    if public:
        for i in np.flatnonzero(chosen).tolist():
            chosen[i] = not entropy.in_public(int(starts[i]), public)
    each = np.flatnonzero(maybe)
    if len(each):
        decided = [entropy.is_finding(text, s, e, public)
                   for s, e in zip(starts[each].tolist(), ends[each].tolist(), strict=True)]
        chosen[each[np.array(decided, dtype=bool)]] = True
    return list(zip(starts[chosen].tolist(), ends[chosen].tolist(), strict=True))
