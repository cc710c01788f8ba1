"""The tool catalog of a project: every ``tools/<name>.yaml``, loaded and checked once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from canal.core.next import act
from canal.workflows.tools.backends import backend_tools, read_listings
from canal.workflows.tools.errors import TOOL_DEFINITION_INVALID, TOOL_NOT_FOUND, ToolError
from canal.workflows.tools.layout import refuse_symlink
from canal.workflows.tools.model import ToolDefinition, placement_problems
from canal.workflows.tools.yamlsrc import YamlSource, YamlSyntaxError, parse_yaml

TOOLS_DIR = "tools"


def display_path(path: Path, base: Path | None) -> str:
    if base is not None:
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    return str(path)


def _invalid(shown: str, problems: list[tuple[int, str, str]]) -> ToolError:
    lines = [f"{shown}:{line}: {f'{field}: ' if field else ''}{problem}" for line, field, problem in problems]
    return TOOL_DEFINITION_INVALID(
        "invalid tool definition\n" + "\n".join(lines),
        hint="fix the file", next=act("discover"),
        details={"file": shown,
                 "errors": [{"line": ln, "field": f, "problem": p} for ln, f, p in problems]},
    )


def _loc_text(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def tool_from_source(src: YamlSource, shown: str) -> ToolDefinition:
    """Validate parsed YAML into a tool whose name must equal the file's stem."""
    if not isinstance(src.data, dict):
        raise _invalid(shown, [(src.line_of(()), "", "expected a mapping of tool fields")])
    data: dict[str, Any] = dict(src.data)
    stem = src.path.stem
    data.setdefault("name", stem)
    if data["name"] != stem:
        raise _invalid(shown, [(src.line_of(("name",)), "name",
                                f"must equal the file name {stem!r} (tools/<name>.yaml)")])
    if "mcp" in data:
        raise _invalid(shown, [(src.line_of(("mcp",)), "mcp", "backend tools come from tools.mcp_servers in "
                                "canal.yaml (discover lists them); a tool file cannot name one")])
    try:
        tool = ToolDefinition.model_validate(data)
    except ValidationError as exc:
        raise _invalid(shown, [(src.line_of(err["loc"]), _loc_text(err["loc"]), err["msg"])
                               for err in exc.errors()]) from None
    problems = placement_problems(tool)
    if problems:
        raise _invalid(shown, [(src.line_of(loc), _loc_text(loc), p) for loc, p in problems])
    return tool


def load_tool(path: Path, base: Path | None = None) -> ToolDefinition:
    shown = display_path(path, base)
    try:
        src = parse_yaml(path.read_text(encoding="utf-8"), path)
    except YamlSyntaxError as exc:
        raise _invalid(shown, [(exc.line, "", f"YAML syntax: {exc.problem}")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(shown, [(1, "", f"cannot read: {exc}")]) from None
    return tool_from_source(src, shown)


def tool_files(project_dir: Path) -> list[Path]:
    folder = refuse_symlink(project_dir / TOOLS_DIR, project_dir)
    if not folder.is_dir():
        return []
    files = [refuse_symlink(p, project_dir) for p in folder.iterdir()
             if p.suffix in (".yaml", ".yml") and not p.name.startswith(".")]
    return sorted((p for p in files if p.is_file()), key=lambda p: p.name)


class ToolRegistry:
    """Tools by name. ``get`` is what the workflow engine and ``canal tool`` call."""

    def __init__(self, tools: Mapping[str, ToolDefinition]) -> None:
        self._tools = dict(sorted(tools.items()))

    @classmethod
    def from_project(cls, project_dir: Path) -> ToolRegistry:
        """The local tools and the backend tools ``canal discover`` listed."""
        local = cls.local(project_dir)
        backends, _skipped = backend_tools(read_listings(project_dir), local.names())
        return cls({**local._tools, **backends})

    @classmethod
    def local(cls, project_dir: Path) -> ToolRegistry:
        """Only the project's ``tools/*.yaml``."""
        tools: dict[str, ToolDefinition] = {}
        for path in tool_files(project_dir):
            tool = load_tool(path, project_dir)
            if tool.name in tools:
                shown = display_path(path, project_dir)
                raise _invalid(shown, [(1, "name", f"tool {tool.name!r} is defined twice (.yaml and .yml)")])
            tools[tool.name] = tool
        return cls(tools)

    def get(self, name: str) -> ToolDefinition:
        try:
            return self._tools[name]
        except KeyError:
            msg = f"no tool named {name!r} in {TOOLS_DIR}/"
            raise TOOL_NOT_FOUND(msg, next=act("tool.list"),
                               details={"tool": name, "known": list(self._tools)}) from None

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
