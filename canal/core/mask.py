"""Masking exact values a caller knows are secret (a workflow's sensitive gate fields), which no
pattern may catch; longest first, so a value containing another is masked whole."""

from __future__ import annotations

from collections.abc import Sequence

MASK = "****"


def mask_exact(text: str, secrets: Sequence[str], mask: str = MASK) -> str:
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, mask)
    return text
