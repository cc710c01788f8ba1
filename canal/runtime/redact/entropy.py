"""Shannon entropy, and the high-entropy token detector with its false-positive filters.

A token counts as a secret only if it is long, dense (Shannon entropy), mixes letters and digits the
way random data does (many lower-to-upper and letter-digit switches), and is none of: a hex digest
(git SHAs, sha256), a UUID, a path or identifier made of words, a subresource-integrity digest
(``sha512-...``), an SSH public key, or a line of a public PEM block (certificate, public key).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator

import regex

from canal.runtime.redact.rules import FLAGS

TOKEN = regex.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{24,}={0,2}(?![\w+/=-])", FLAGS)
HEX = regex.compile(r"^[0-9a-fA-F]+$", FLAGS)
UUIDISH = regex.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$", FLAGS)
WORDLIKE = regex.compile(r"^(?:[A-Za-z][a-z]{1,}\d{0,4}|[A-Z]{1,8}\d{0,4}|\d{1,8})$", FLAGS)
SWITCH = regex.compile(r"(?<=[a-z])[A-Z]|(?<=[A-Za-z])[0-9]|(?<=[0-9])[A-Za-z]", FLAGS)
LOWER, UPPER, DIGITS = (regex.compile(p, FLAGS) for p in ("[a-z]", "[A-Z]", "[0-9]"))
# published by design: SRI digests (npm, pip), SSH public keys (base64 of length + "ssh-..." etc.)
PUBLIC_TOKEN = regex.compile(
    r"^(?:sha(?:1|256|384|512)-|AAAA[B-I][0-9A-Za-z]{1,3}(?:NzaC1|VjZHNh|NrLXNza|NrLWVjZHNh))", FLAGS)
# a PEM block that is not a private key, complete or cut short; its base64 lines are public data
PUBLIC_PEM = regex.compile(
    r"-----BEGIN (?![A-Z0-9 ]*PRIVATE)[A-Z0-9 ]{1,40}-----"
    r"(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{1,128}|[A-Za-z-]{1,30}:[^\r\n\\]{0,200})?)+", FLAGS)
MIN_ENTROPY = 4.0
MIN_SWITCH_RATE = 0.3


def shannon(text: str) -> float:
    """Bits per character, as gitleaks computes it."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _switch_rate(token: str) -> float:
    return len(SWITCH.findall(token)) / max(len(token) - 1, 1)


def _made_of_words(token: str) -> bool:
    parts = [p for p in regex.split(r"[/_\-+.]", token) if p]
    camel = [w for p in parts for w in regex.findall(r"[A-Z]?[a-z]+\d*|[A-Z]+\d*(?![a-z])|\d+", p)]
    return bool(camel) and all(WORDLIKE.match(w) for w in camel) and len(camel) * 4 <= len(token)


def looks_random(token: str) -> bool:
    core = token.rstrip("=")
    if HEX.match(core) or UUIDISH.match(core):
        return False
    if not (LOWER.search(core) and UPPER.search(core) and DIGITS.search(core)):
        return False
    if shannon(core) < MIN_ENTROPY:
        return False
    return _switch_rate(core) >= MIN_SWITCH_RATE and not _made_of_words(core)


def _public_blocks(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in PUBLIC_PEM.finditer(text)] if "-----BEGIN " in text else []


def high_entropy_tokens(text: str) -> Iterator[tuple[int, int]]:
    public = _public_blocks(text)
    for m in TOKEN.finditer(text):
        if PUBLIC_TOKEN.match(m.group(0)) or any(s <= m.start() < e for s, e in public):
            continue
        if looks_random(m.group(0)):
            yield m.span()
