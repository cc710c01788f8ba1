"""YAML parsed together with its node tree, so an error about a value can name the line it sits on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class YamlSource:
    """Parsed data plus the composed node tree of one document."""

    path: Path
    data: Any
    root: yaml.Node | None
    line_offset: int = 0

    def line_of(self, loc: Sequence[int | str]) -> int:
        """1-based line of the deepest node along ``loc`` (a pydantic error location); 1 if unknown."""
        node = self.root
        line = node.start_mark.line + 1 if node is not None else 1
        for part in loc:
            node = _child(node, part)
            if node is None:
                break
            line = node.start_mark.line + 1
        return line + self.line_offset

    def where(self, loc: Sequence[int | str] = ()) -> str:
        return f"{self.path}:{self.line_of(loc)}"


def _child(node: yaml.Node | None, part: int | str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                return value  # type: ignore[no-any-return]
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]  # type: ignore[no-any-return]
    return None


class YamlSyntaxError(ValueError):
    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


def parse_yaml(text: str, path: Path, *, line_offset: int = 0) -> YamlSource:
    """Parse one YAML document; a syntax error becomes ``YamlSyntaxError`` naming file:line."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = (mark.line + 1 if mark is not None else 1) + line_offset
        raise YamlSyntaxError(line, str(exc.problem or exc)) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1 + line_offset, str(exc)) from exc
    return YamlSource(path=path, data=data, root=root, line_offset=line_offset)
