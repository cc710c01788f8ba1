"""Packages that export their names lazily (``canal.core.lazy``) offer exactly what they list, each name
from the module mypy is told about, and importing one of their modules loads none of the others."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import canal

ROOT = Path(canal.__file__).parent


def _lazy_packages() -> list[str]:
    found = []
    for init in sorted(ROOT.rglob("__init__.py")):
        if "exports(__name__" in init.read_text():
            found.append(".".join(init.parent.relative_to(ROOT.parent).parts))
    return found


LAZY = _lazy_packages()


def _typed_names(package: str) -> dict[str, str]:
    """Name -> module, as the package's ``if TYPE_CHECKING:`` block imports it (what mypy reads)."""
    init = ROOT.parent.joinpath(*package.split("."), "__init__.py")
    names: dict[str, str] = {}
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                assert imp.module is not None
                names.update({a.name: imp.module for a in imp.names})
    return names


def test_the_packages_that_load_lazily_are_those_a_first_command_needs_light() -> None:
    assert set(LAZY) >= {"canal.presenter", "canal.host.checkpoints", "canal.host.forks",
                         "canal.host.approvals", "canal.host.audit"}


@pytest.mark.parametrize("package", LAZY)
def test_every_listed_name_is_the_one_mypy_is_told_of(package: str) -> None:
    module = importlib.import_module(package)
    typed = _typed_names(package)
    assert sorted(typed) == sorted(module.__all__)
    for name, source in typed.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), name
    with pytest.raises(AttributeError, match="has no attribute"):
        _ = module.no_such_name


@pytest.mark.parametrize("package", LAZY)
def test_importing_the_package_loads_none_of_its_modules(package: str) -> None:
    probe = (f"import sys, json, {package}; "
             f"print(json.dumps([m for m in sys.modules if m.startswith('{package}.')]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
