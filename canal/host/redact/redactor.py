"""``Redactor``: replaces each detected secret by ``[REDACTED_SECRET:<rule>:<id>]``.

The id is a keyed HMAC of the secret value (not a plain hash, which would let anyone test guesses of
a low-entropy password), so one value keeps one placeholder across outputs and runs under one key.
The placeholder-to-value map goes to the caller who asked for it (``redact_with_map``, ``redact_many``:
``SealedStore`` seals it); the redactor keeps no value it found. A server's redactor lives for days, and
would otherwise hold every secret of every output in clear.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable

from canal.host.keys.store import KeyStore
from canal.host.redact.detector import PLACEHOLDER, Detector, Finding
from canal.host.redact.entropy import BATCH_MIN
from canal.host.redact.replace import replacer as _replacer

ID_PURPOSE = "redaction-id"
ID_HEX = 12
CLEAN_CACHE = 100_000  # entries; cleared when full
CLEAN_TEXT_MAX = 4096  # characters: longer texts are scanned every time (they rarely repeat)
BLOCK = 64  # bytes: SHA-256's block, HMAC's pad
MIN_PIECE = 4  # pieces of a cross-field finding shorter than this are not worth a placeholder


class Redactor:
    """Callable as ``redact(text) -> text`` (``host.ports.Redactor``)."""

    def __init__(self, id_key: bytes | None = None, detector: Detector | None = None) -> None:
        self._key = id_key or secrets.token_bytes(32)  # without a key: stable within this process
        self._inner, self._outer = _hmac_states(self._key)
        self._detector = detector or Detector()
        # texts already scanned without a finding: a document saved again is mostly the same strings
        self._clean: set[str] = set()

    @classmethod
    def from_keys(cls, keys: KeyStore, detector: Detector | None = None) -> Redactor:
        return cls(keys.derive(ID_PURPOSE), detector)

    def placeholder(self, rule: str, secret: str) -> str:
        # HMAC-SHA256 from the key's inner and outer states, hashed once (``_hmac_states``): half
        # the cost of ``hmac.digest``, which hashes the key again for each of ~14,000 values a MiB
        inner = self._inner.copy()
        inner.update(secret.encode())
        outer = self._outer.copy()
        outer.update(inner.digest())
        return f"[REDACTED_SECRET:{rule}:{outer.digest()[:ID_HEX // 2].hex()}]"

    def spread_key(self) -> bytes | None:
        """The id key, for a worker process to make this same redactor (``pool``): only when its
        detector is the built-in one, which ``Redactor(key)`` makes there; else None."""
        return self._key if self._detector.builtin else None

    def findings(self, text: str) -> list[Finding]:
        return self._detector.find(text)

    def redact_with_map(self, text: str) -> tuple[str, dict[str, str]]:
        by_value = self._values(text)
        if not by_value:
            return text, {}
        return _replacer(by_value)(text), _mapping(by_value)

    def redact_many(self, texts: Iterable[str]) -> tuple[Callable[[str], str], dict[str, str]]:
        """One detector pass over many short texts (a document's strings), then per-text replacement.

        The texts are joined by newlines; a finding that spans two of them is also replaced piece by
        piece, so a secret split across fields never survives in either field.
        """
        texts = list(texts)
        fresh = [t for t in texts if t not in self._clean]
        by_value = self._values("\n".join(fresh)) if fresh else {}
        if len(self._clean) > CLEAN_CACHE:
            self._clean.clear()
        self._clean.update(t for t in fresh if not any(v in t for v in by_value))
        mapping = _mapping(by_value)
        for value, placeholder in list(by_value.items()):
            for piece in value.split("\n") if "\n" in value else ():
                if len(piece) >= MIN_PIECE:
                    by_value.setdefault(piece, placeholder)
        if not by_value:
            return (lambda text: text), {}
        return _replacer(by_value), mapping

    def _values(self, text: str) -> dict[str, str]:
        by_value: dict[str, str] = {}
        for start, end, rule in self._detector.spans(text):
            secret = text[start:end]
            if secret not in by_value:
                by_value[secret] = self.placeholder(rule, secret)
        return by_value

    def redact(self, text: str) -> str:
        # short texts come back often (a sandbox name, a working directory, a rule id in every audit
        # record): one already scanned without a finding is not scanned again
        if not text or text in self._clean:
            return text
        out = self.redact_with_map(text)[0]
        if out is text and len(text) <= CLEAN_TEXT_MAX:
            if len(self._clean) > CLEAN_CACHE:
                self._clean.clear()
            self._clean.add(text)
        return out

    def redact_keep_lines(self, text: str) -> str:
        """Like ``redact``, but a multi-line secret leaves as many line breaks as it had, so line
        numbers stay true (a saved full output that hints point into by line number)."""
        by_value = self._values(text)
        if not by_value:
            return text
        for value, placeholder in by_value.items():
            if "\n" in value:
                by_value[value] = placeholder + "\n" * value.count("\n")
        return _replacer(by_value)(text)

    __call__ = redact


def _mapping(by_value: dict[str, str]) -> dict[str, str]:
    """Placeholder to value, for the caller only."""
    return {p: v for v, p in by_value.items()}


def _hmac_states(key: bytes) -> tuple[hashlib._Hash, hashlib._Hash]:
    """SHA-256 after the key's inner and outer pads (RFC 2104): HMAC is then two copies, two updates."""
    if len(key) > BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(BLOCK, b"\0")
    return (hashlib.sha256(bytes(b ^ 0x36 for b in key)), hashlib.sha256(bytes(b ^ 0x5C for b in key)))


def warm_up() -> None:
    """Import and compile what the first text of ``BATCH_MIN`` characters or more in a process needs:
    numpy, the array checks, the rule gate's database (0.2-0.4 s here). A server does this once no
    request waits, so the first big output of its life does not pay for it."""
    line = "ghp_x aws sk " + "Ab1" * 9 + "\n"  # keywords, so the gate is compiled; a token, so numpy runs
    Redactor().redact_keep_lines(line * (BATCH_MIN // len(line) + 1))


def restore(text: str, mapping: dict[str, str]) -> str:
    """Put values back for placeholders found in ``mapping`` (for a later step's argv or env only)."""
    return str(PLACEHOLDER.sub(lambda m: mapping.get(m.group(0), m.group(0)), text))
