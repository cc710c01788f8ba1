"""Exact secrets are masked longest first, before the pattern redactor sees the text."""

from __future__ import annotations

from canal.core.mask import mask_exact


def test_longest_secret_first_and_empty_values_ignored() -> None:
    text = "token=abc123 and abc123-long and abc"
    assert mask_exact(text, ["abc123", "abc123-long", ""]) == "token=**** and **** and abc"
    assert mask_exact(text, []) == text
