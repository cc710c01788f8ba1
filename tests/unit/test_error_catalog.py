"""docs/errors.md is the generated catalogue of every error code, and codes are unique per meaning."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from canal.core.errors import CanalError
from canal.error_catalog import entries, error_classes, registered, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def test_docs_errors_md_is_current() -> None:
    assert DOC.read_text() == render(), "regenerate: python -m canal.error_catalog > docs/errors.md"


def test_every_code_is_upper_snake_with_a_known_exit_code() -> None:
    found = entries()
    assert len(found) > 80
    for entry in found:
        assert entry.code.isupper(), entry
        assert " " not in entry.code, entry
        assert entry.exit_code in {1, 2, 120, 121, 122, 124, 125, 137}, entry


def test_every_error_class_of_every_package_is_catalogued() -> None:
    classes = error_classes()
    codes = registered()
    modules = {cls.__module__ for cls in classes} | {code.where for code in codes}
    assert {"core", "sandbox", "policy", "workflows", "runtime", "host"} <= {m.split(".")[1] for m in modules}
    assert any(m.startswith("canal.cli.") for m in modules)
    assert any(m.startswith("canal.mcp.") for m in modules)
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", DOC.read_text(), re.MULTILINE))
    assert {cls.code for cls in classes} | {code.code for code in codes} == documented


def test_codes_are_data_and_a_class_stays_only_where_code_catches_it() -> None:
    """Issue 37: at most 50 classes under the error root; every other code is registered data."""
    assert len([cls for cls in error_classes() if cls is not CanalError]) <= 50
    assert len(registered()) > 100


_LITERAL_CODE = re.compile(r"""(?:format_error\(|["']code["']:\s*)["']([A-Z][A-Z0-9_]+)["']""")


def test_no_code_is_written_as_a_bare_literal_outside_the_catalogue() -> None:
    codes = {e.code for e in entries()}
    root = Path(__file__).resolve().parents[2] / "canal"
    for path in root.rglob("*.py"):
        for code in _LITERAL_CODE.findall(path.read_text()):
            assert code in codes, f"{path}: {code} is not a CanalError code (add a class for it)"


_UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def test_every_code_given_to_anything_is_a_catalogued_class_code() -> None:
    """``code = "X"`` on a class that is not a CanalError, or ``code="X"`` passed to a constructor, would be a
    code no catalogue lists (the agent's stdlib-only modules have no codes)."""
    codes = {e.code for e in entries()}
    root = Path(__file__).resolve().parents[2] / "canal"
    seen = 0
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            named = (isinstance(node, ast.keyword) and node.arg == "code") or (
                isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "code"
                                                     for t in node.targets))
            value = getattr(node, "value", None)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("register", "register_code") and len(node.args) >= 2:
                named, value = True, node.args[1]
            if named and isinstance(value, ast.Constant) and isinstance(value.value, str) \
                    and _UPPER_SNAKE.match(value.value):
                seen += 1
                assert value.value in codes, f"{path}: {value.value} is not a catalogued CanalError code"
    assert seen > 80
