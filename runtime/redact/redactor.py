"""``Redactor``: replaces each detected secret by ``[REDACTED_SECRET:<rule>:<id>]``.

The id is a keyed HMAC of the secret value (not a plain hash, which would let anyone test guesses of
a low-entropy password), so one value keeps one placeholder across outputs and runs under one key.
The placeholder-to-value map is kept in memory for the caller, who seals it (``SealedStore`` does).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import regex

from runtime.keys.store import KeyStore
from runtime.redact.detector import PLACEHOLDER, Detector, Finding

ID_PURPOSE = "redaction-id"
ID_HEX = 12


class Redactor:
    """Callable as ``redact(text) -> text`` (``runtime.ports.Redactor``)."""

    def __init__(self, id_key: bytes | None = None, detector: Detector | None = None) -> None:
        self._key = id_key or secrets.token_bytes(32)  # without a key: stable within this process
        self._detector = detector or Detector()
        self.secrets: dict[str, str] = {}

    @classmethod
    def from_keys(cls, keys: KeyStore, detector: Detector | None = None) -> Redactor:
        return cls(keys.derive(ID_PURPOSE), detector)

    def placeholder(self, rule: str, secret: str) -> str:
        digest = hmac.new(self._key, secret.encode(), hashlib.sha256).hexdigest()[:ID_HEX]
        return f"[REDACTED_SECRET:{rule}:{digest}]"

    def findings(self, text: str) -> list[Finding]:
        return self._detector.find(text)

    def redact_with_map(self, text: str) -> tuple[str, dict[str, str]]:
        found = self._detector.find(text)
        if not found:
            return text, {}
        by_value: dict[str, str] = {}
        for f in found:
            by_value.setdefault(f.secret, self.placeholder(f.rule, f.secret))
        # every occurrence of a detected value goes, not only the one a rule saw in context
        pattern = regex.compile("|".join(regex.escape(v) for v in sorted(by_value, key=len, reverse=True)))
        out = pattern.sub(lambda m: by_value[m.group(0)], text)
        mapping = {p: v for v, p in by_value.items()}
        self.secrets.update(mapping)
        return out, mapping

    def redact(self, text: str) -> str:
        return self.redact_with_map(text)[0]

    __call__ = redact


def restore(text: str, mapping: dict[str, str]) -> str:
    """Put values back for placeholders found in ``mapping`` (for a later step's argv or env only)."""
    return str(PLACEHOLDER.sub(lambda m: mapping.get(m.group(0), m.group(0)), text))
