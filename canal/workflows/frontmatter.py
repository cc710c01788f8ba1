"""Split a Markdown file into YAML front matter and body, keeping the line of every YAML value.

Errors must name the file and line, so the YAML is composed into nodes once: each value's position
(as a path of keys and list indexes) maps to its 1-based line in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

PathKey = tuple[str | int, ...]


class FrontMatterError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class FrontMatter:
    data: dict[str, Any]
    body: str
    lines: dict[PathKey, int]
    first_line: int  # line of the opening ``---``
    body_line: int = 1  # line where the body's first non-blank line sits

    def line_of(self, path: Sequence[str | int]) -> int:
        """The line of the deepest known node on ``path`` (the front matter start when none is known)."""
        key: PathKey = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), self.first_line)


def split(text: str) -> tuple[str, str, int]:
    """Return (yaml text, body, line number where the body starts); the yaml starts on line 2."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        msg = "the file must start with a '---' line opening the YAML front matter"
        raise FrontMatterError(msg, 1)
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            rest = "".join(lines[index + 1 :])
            body = rest.lstrip("\n")
            return "".join(lines[1:index]), body.rstrip("\n"), index + 2 + len(rest) - len(body)
    msg = "the YAML front matter is not closed by a '---' line"
    raise FrontMatterError(msg, 1)


def _walk(node: yaml.Node, path: PathKey, offset: int, out: dict[PathKey, int]) -> None:
    # A mapping entry takes its key's line: for a block value that is where the author looks.
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            child: PathKey = (*path, str(key_node.value))
            out[child] = key_node.start_mark.line + offset
            _walk(value_node, child, offset, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*path, index)
            out[child] = item.start_mark.line + offset
            _walk(item, child, offset, out)


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: several times faster


def _load(text: str) -> tuple[yaml.Node | None, Any]:
    """Parse once: the node tree (for lines) and the data constructed from it."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def parse(text: str) -> FrontMatter:
    """Parse a Markdown file with YAML front matter; raise ``FrontMatterError`` with a line on failure."""
    yaml_text, body, body_line = split(text)
    start = 2
    try:
        node, data = _load(yaml_text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + start) if mark else start
        msg = f"invalid YAML: {exc.problem or exc}"
        raise FrontMatterError(msg, line) from exc
    if node is None or not isinstance(data, dict):
        msg = "the front matter must be a YAML mapping"
        raise FrontMatterError(msg, start)
    lines: dict[PathKey, int] = {(): start}
    _walk(node, (), start, lines)
    return FrontMatter(data=data, body=body, lines=lines, first_line=1, body_line=body_line)
