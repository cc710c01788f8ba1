r"""Shannon entropy, and the high-entropy token detector with its false-positive filters.

A token counts as a secret only if it is long, dense (Shannon entropy), mixes letters and digits the
way random data does (many lower-to-upper and letter-digit switches), and is none of: a hex digest
(git SHAs, sha256), a UUID, a path or identifier made of words, a subresource-integrity digest
(``sha512-...``), an SSH public key, or a line of a public PEM block (certificate, public key).

A token is a whole run of ``[A-Za-z0-9+/_=-]`` that is 24 or more of them without ``=`` and at most two
``=`` at its end: the pattern ``(?<![\w+/=-])[A-Za-z0-9+/_-]{24,}={0,2}(?![\w+/=-])`` (ASCII), which
the ``regex`` module tried at every position (15-20 MiB/s). The runs come from ``runs`` instead, and
the filters use stdlib ``re`` on ASCII-only patterns, which matches the same on these tokens.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

import regex

from canal.host.redact.rules import FLAGS
from canal.host.redact.runs import runs, token_map, token_maps

MIN_TOKEN = 24
BATCH_MIN = 16 * 1024  # characters: a longer text is checked over arrays (``batch``)
MAX_PADDING = 2
HEX = re.compile(r"[0-9a-fA-F]+")
UUIDISH = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
WORDLIKE = re.compile(r"(?:[A-Za-z][a-z]{1,}\d{0,4}|[A-Z]{1,8}\d{0,4}|\d{1,8})", re.ASCII)
CAMEL = re.compile(r"[A-Z]?[a-z]+\d*|[A-Z]+\d*(?![a-z])|\d+")
# character classes for counting switches: l(ower), u(pper), d(igit), o(ther)
_CLASSES = str.maketrans({**{chr(c): "l" for c in range(ord("a"), ord("z") + 1)},
                          **{chr(c): "u" for c in range(ord("A"), ord("Z") + 1)},
                          **{chr(c): "d" for c in range(ord("0"), ord("9") + 1)}, "+": "o", "/": "o",
                          "_": "o", "-": "o", "=": "o"})
_SWITCHES = ("lu", "ld", "ud", "dl", "du")  # lower->upper, letter->digit, digit->letter
# published by design: SRI digests (npm, pip), SSH public keys (base64 of length + "ssh-..." etc.)
PUBLIC_TOKEN = re.compile(
    r"(?:sha(?:1|256|384|512)-|AAAA[B-I][0-9A-Za-z]{1,3}(?:NzaC1|VjZHNh|NrLXNza|NrLWVjZHNh))")
# a PEM block that is not a private key, complete or cut short; its base64 lines are public data
PUBLIC_PEM = regex.compile(
    r"-----BEGIN (?![A-Z0-9 ]*PRIVATE)[A-Z0-9 ]{1,40}-----"
    r"(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{1,128}|[A-Za-z-]{1,30}:[^\r\n\\]{0,200})?)+", FLAGS)
SHORT = 256  # characters
MIN_ENTROPY = 4.0
MIN_SWITCH_RATE = 0.3


def shannon(text: str) -> float:
    """Bits per character, as gitleaks computes it (the same terms, summed in the same order)."""
    if not text:
        return 0.0
    n = len(text)
    counts = Counter(text).values()
    if n > SHORT:
        return -sum(c / n * math.log2(c / n) for c in counts)
    return -sum(map(_terms(n).__getitem__, counts))  # the same terms, summed in the same order


@lru_cache(maxsize=128)
def _terms(n: int) -> tuple[float, ...]:
    """``c / n * log2(c / n)`` for every count ``c`` of a text of ``n`` characters."""
    return (0.0, *(c / n * math.log2(c / n) for c in range(1, n + 1)))


def _switch_rate(token: str, classes: str | None = None) -> float:
    classes = token.translate(_CLASSES) if classes is None else classes
    return sum(classes.count(pair) for pair in _SWITCHES) / max(len(token) - 1, 1)


def _word_starts(classes: str) -> int:
    """A lower bound on the CAMEL words of a token, from its character classes: a word starts at the
    start of each part (after a separator), at an upper-case letter after a lower-case letter or a
    digit, and at a lower-case letter after a digit (no alternative goes on across either)."""
    first = classes[:1] in ("l", "u", "d")
    return first + sum(classes.count(pair) for pair in ("ol", "ou", "od", "lu", "du", "dl"))


def _made_of_words(token: str, classes: str | None = None) -> bool:
    # too many words already rules out a token made of words: random data, without the findall
    classes = token.translate(_CLASSES) if classes is None else classes
    if _word_starts(classes) * 4 > len(token):
        return False
    # the words never span a separator (no alternative matches one), so one findall over the whole
    # token finds what a findall over each part between separators finds
    camel = CAMEL.findall(token)
    return bool(camel) and len(camel) * 4 <= len(token) and all(WORDLIKE.fullmatch(w) for w in camel)


def looks_random(token: str) -> bool:
    core = token.rstrip("=")
    if HEX.fullmatch(core) or UUIDISH.fullmatch(core):
        return False
    classes = core.translate(_CLASSES)
    if not ("l" in classes and "u" in classes and "d" in classes):
        return False
    if shannon(core) < MIN_ENTROPY:
        return False
    return _switch_rate(core, classes) >= MIN_SWITCH_RATE and not _made_of_words(core, classes)


def is_token(run: str) -> bool:
    """Whether a whole run of token characters is a token: 24+ characters, then at most two ``=``."""
    core = run.rstrip("=")
    return len(run) - len(core) <= MAX_PADDING and len(core) >= MIN_TOKEN and "=" not in core


def _public_blocks(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in PUBLIC_PEM.finditer(text)] if "-----BEGIN " in text else []


def tokens(text: str) -> Iterator[tuple[int, int, str]]:
    """Every token of ``text`` with its span, in text order."""
    for start, end in runs(token_map(text), MIN_TOKEN):
        token = text[start:end]
        if is_token(token):
            yield start, end, token


def is_finding(text: str, start: int, end: int, public: list[tuple[int, int]]) -> bool:
    """Whether the run of token characters ``text[start:end]`` is a high-entropy finding, ``public``
    being the spans of the text's public PEM blocks (``_public_blocks``)."""
    token = text[start:end]
    if not is_token(token) or PUBLIC_TOKEN.match(token):
        return False
    if in_public(start, public):
        return False
    return looks_random(token)


def in_public(start: int, public: list[tuple[int, int]]) -> bool:
    """Whether a token starting at ``start`` lies in one of the public PEM blocks ``public``."""
    at = bisect.bisect_right(public, (start, math.inf)) - 1
    return at >= 0 and start < public[at][1]


def high_entropy_tokens(text: str) -> Iterator[tuple[int, int]]:
    public = _public_blocks(text)
    mapped, not_hex = token_maps(text)
    for start, end in runs(mapped, MIN_TOKEN):  # ``tokens`` inlined: thousands per MiB
        if not_hex.find(b"a", start, end) == -1:
            continue  # hex digits and ``=`` only: a digest (HEX), or not a token
        if is_finding(text, start, end, public):
            yield start, end
