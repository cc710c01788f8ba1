"""``canal mcp``: Canal as the execution backend of any agent harness, over the Model Context Protocol."""

from canal.mcp.server import CanalMcp, ServerOptions, build_server, serve, serve_stdio
from canal.mcp.tools import TOOLS, ToolSpec, parse_args

__all__ = ["TOOLS", "CanalMcp", "ServerOptions", "ToolSpec", "build_server", "parse_args", "serve",
           "serve_stdio"]
