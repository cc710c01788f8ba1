"""docs/errors.md is the generated catalogue of every error code, and codes are unique per meaning."""

from __future__ import annotations

from pathlib import Path

from canal.runtime.error_catalog import entries, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def test_docs_errors_md_is_current() -> None:
    assert DOC.read_text() == render(), "regenerate: python -m canal.runtime.error_catalog > docs/errors.md"


def test_every_code_is_upper_snake_with_a_known_exit_code() -> None:
    found = entries()
    assert len(found) > 80
    for entry in found:
        assert entry.code.isupper(), entry
        assert " " not in entry.code, entry
        assert entry.exit_code in {1, 2, 120, 121, 122, 124, 125, 137}, entry
