"""The public API is ``from canal import Canal, RunResult, CanalError``; what people read uses it."""

from __future__ import annotations

import re
from pathlib import Path

import canal
from canal.core.errors import CanalError
from canal.runtime.api import Canal
from canal.runtime.run.result import RunResult

REPO = Path(__file__).resolve().parents[2]
# Canal's components before they moved into the one `canal` package (issue #14)
_OLD_IMPORT = re.compile(r"^\s*(?:from|import)\s+(?:runtime|sandbox|policy|workflows|images)\b", re.MULTILINE)
_CANAL_IMPORT = re.compile(r"^\s*from\s+(\S+)\s+import\s+.*\bCanal\b(?!\w)", re.MULTILINE)


def test_the_public_names() -> None:
    assert sorted(canal.__all__) == ["Canal", "CanalError", "RunResult"]
    assert (canal.Canal, canal.RunResult, canal.CanalError) == (Canal, RunResult, CanalError)


def _read_by_people() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "bench").glob("*.py"))]


def test_readme_docs_and_benchmarks_import_canal_from_its_one_package() -> None:
    seen = 0
    for path in _read_by_people():
        text = path.read_text()
        assert not _OLD_IMPORT.findall(text), f"{path.name}: imports a component outside canal"
        for module in _CANAL_IMPORT.findall(text):
            assert module == "canal", f"{path.name}: from {module} import Canal (not from canal)"
            seen += 1
    assert seen >= 4  # README, docs/server.md, docs/tools.md, the benchmarks
