"""``tools.mcp_servers``: the MCP backends of a project, a trusted setting (a person approves it).

Example::

    tools:
      mcp_servers:
        backend:                              # the server's name
          command: [python3, mcp/backend.py]  # stdio, inside a sandbox of its own
          env_from_env: {BACKEND_TOKEN: BACKEND_TOKEN}   # server variable <- Canal's environment
          timeout: 30                         # seconds for one request (start, list, call)
          workspace: none                     # none | ro: the project folder in the server's sandbox
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SERVER_NAME = r"^[a-z][a-z0-9_-]{0,23}$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class McpServerSettings(_Model):
    """One backend. ``command``: a stdio server run in the project's image, in a sandbox of its own
    (hardened like every sandbox, on ``sandbox.network``). ``url`` (streamable HTTP) is not supported yet."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    # credentials only from Canal's environment: server variable (or header) -> variable of Canal's
    env_from_env: dict[str, str] = Field(default_factory=dict)
    headers_from_env: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=30.0, gt=0, le=600)
    # the project folder in the server's sandbox: none (the default: the server cannot read the agent's
    # work, nor run code the agent wrote) or ro (read-only; code it imports from there is the agent's)
    workspace: Literal["none", "ro"] = "none"

    def project_files(self) -> list[str]:
        """The arguments of ``command`` that may name a file of the project (relative, not an option):
        those that do are approved by content and run from those bytes."""
        return [part for part in (self.command or ())[1:] if not part.startswith(("-", "/"))]

    @field_validator("env_from_env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [f"{k}: {v}" for k, v in value.items()
               if not re.match(ENV_NAME, k) or not re.match(ENV_NAME, v)]
        if bad:
            msg = f"env_from_env maps variable names to variable names ({ENV_NAME}); not: {', '.join(bad)}"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            msg = "give exactly one of command: (a stdio server, as an argv list) or url:"
            raise ValueError(msg)
        if self.command is not None and (not self.command or not all(self.command)):
            msg = "command: must have at least the program, and no empty element"
            raise ValueError(msg)
        if self.command is not None and "/" in self.command[0] and not self.command[0].startswith("/"):
            msg = ("command: the program (the first element) is one of the image, such as python3 or node; "
                   "a script of the project goes after its interpreter: [sh, mcp/server.sh]")
            raise ValueError(msg)
        if self.command is not None and any("\0" in part for part in self.command):
            msg = "command: must not hold a NUL byte"
            raise ValueError(msg)
        if self.headers_from_env and self.url is None:
            msg = "headers_from_env: applies to a url: server; a stdio server gets env_from_env"
            raise ValueError(msg)
        if self.url is not None:
            msg = ("url: streamable-HTTP MCP servers are not supported yet; run the server over stdio "
                   "(command:) or put a stdio bridge in the image")
            raise ValueError(msg)
        return self


class ToolsSettings(_Model):
    mcp_servers: dict[str, McpServerSettings] = Field(default_factory=dict)

    @field_validator("mcp_servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        bad = [n for n in value if not re.match(SERVER_NAME, n)]
        if bad:
            msg = f"server names must match {SERVER_NAME}: {bad}"
            raise ValueError(msg)
        return value
