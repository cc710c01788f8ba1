"""The tree shows the architecture: small rooms (docs/architecture.md, "Layout")."""

from __future__ import annotations

from pathlib import Path

import canal

ROOT = Path(canal.__file__).parent
MOST = 20  # modules plus subpackages, ``__init__.py`` included


def _entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()
                  if (p.suffix == ".py" and p.is_file()) or (p / "__init__.py").is_file())


def test_no_package_holds_more_than_twenty_entries() -> None:
    packages = [p.parent for p in ROOT.rglob("__init__.py")]
    crowded = {str(p.relative_to(ROOT.parent)): len(_entries(p)) for p in packages if len(_entries(p)) > MOST}
    assert len(packages) > 25  # the walk found the tree
    assert crowded == {}


def test_every_folder_of_python_files_is_a_package() -> None:
    """A folder of modules without ``__init__.py`` would be skipped by the count above and by mypy."""
    loose = sorted(str(p.relative_to(ROOT.parent)) for p in ROOT.rglob("*.py")
                   if "__pycache__" not in p.parts and not (p.parent / "__init__.py").is_file())
    assert loose == []
