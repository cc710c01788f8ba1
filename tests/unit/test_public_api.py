"""The public API is ``from canal import Canal, RunResult, CanalError``; what people read uses it."""

from __future__ import annotations

import re
import subprocess
import sys
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
    assert len(canal.__all__) >= 20
    assert canal.__all__ == sorted(canal._EXPORTS)
    assert (canal.Canal, canal.RunResult, canal.CanalError) == (Canal, RunResult, CanalError)
    for name in canal.__all__:  # each resolves, from the module that defines it
        value = getattr(canal, name)
        assert getattr(value, "__name__", name) == name or name == "ViewResult", name


def test_import_canal_loads_none_of_the_api_until_a_name_is_used() -> None:
    probe = "import sys, canal; print(sorted(m for m in sys.modules if m.startswith('canal')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['canal', 'canal.core', 'canal.core.version']"


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
