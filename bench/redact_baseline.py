"""The redactor of an older commit, loaded beside today's in one process (for bench_redact --stream).

``git archive REV canal/runtime/redact`` is unpacked in a temp folder and imported as the package
``canal_baseline_redact`` (its imports of its own modules rewritten to that name; what it imports from
the rest of ``canal``, the key store and the error root, is today's, which it only names).
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

NAME = "canal_baseline_redact"


def load(repo: Path, rev: str) -> ModuleType:
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "canal/runtime/redact"],
                             check=True, capture_output=True).stdout
    root = Path(tempfile.mkdtemp(prefix="canal-baseline-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    package = root / NAME
    (root / "canal" / "runtime" / "redact").rename(package)
    for source in package.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        source.write_text(text.replace("canal.runtime.redact", NAME), encoding="utf-8")
    sys.path.insert(0, str(root))
    return importlib.import_module(NAME)
