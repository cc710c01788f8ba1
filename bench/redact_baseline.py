"""The redactor of an older commit, loaded beside today's in one process (for bench_redact --stream).

``git archive REV canal/host/redact`` (``canal/runtime/redact`` before the house move) is unpacked in a
temp folder and imported as the package ``canal_baseline_redact`` (its imports of its own modules
rewritten to that name; what it imports from the rest of ``canal``, the key store and the error root,
is today's, which it only names; so are its error codes, which may be registered only once).
"""

from __future__ import annotations

import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

NAME = "canal_baseline_redact"


# Where the redactor and the stores it imports lived before the host stores had their own package.
OLD_STORES = re.compile(r"\bcanal\.runtime\.(keys|ports|storage)\b")


def load(repo: Path, rev: str) -> ModuleType:
    for folder in ("canal/host/redact", "canal/runtime/redact"):  # today's layout, then the one before
        if subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{rev}:{folder}"],
                          capture_output=True).returncode == 0:
            break
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, folder],
                             check=True, capture_output=True).stdout
    root = Path(tempfile.mkdtemp(prefix="canal-baseline-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    package = root / NAME
    (root / folder).rename(package)
    dotted = folder.replace("/", ".")
    errors = package / "errors.py"
    # error codes are registered once per process: a baseline that registers them raises today's
    shared = errors.exists() and "register(" in errors.read_text(encoding="utf-8")
    for source in package.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        if shared:
            text = text.replace(f"{dotted}.errors", "\0errors")
        text = text.replace(dotted, NAME).replace("\0errors", "canal.host.redact.errors")
        source.write_text(OLD_STORES.sub(r"canal.host.\1", text), encoding="utf-8")
    sys.path.insert(0, str(root))
    return importlib.import_module(NAME)
