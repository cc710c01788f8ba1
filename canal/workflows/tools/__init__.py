"""The tool catalog: tool definitions, the registry, rules, the level-0 index and ``discover``."""

from canal.workflows.tools.discover import DiscoverResult, DiscoverSummary, Writer, discover
from canal.workflows.tools.invoke import PreparedCall, build_argv, parse_result, prepare_call
from canal.workflows.tools.meta import ToolMeta, build_meta, tool_meta
from canal.workflows.tools.model import ToolDefinition
from canal.workflows.tools.registry import ToolRegistry, load_tool

__all__ = [
    "DiscoverResult",
    "DiscoverSummary",
    "PreparedCall",
    "ToolDefinition",
    "ToolMeta",
    "ToolRegistry",
    "Writer",
    "build_argv",
    "build_meta",
    "discover",
    "load_tool",
    "parse_result",
    "prepare_call",
    "tool_meta",
]
