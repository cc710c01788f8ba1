"""The facts of a call to an MCP backend's tool, as rules with ``scope: tool`` see them.

The annotations are the server's own words about the tool (MCP specification, ``ToolAnnotations``); a
missing one means what the specification says it means: not read-only, destructive, not idempotent,
open-world. So a tool that says nothing is treated as the riskiest kind, and a server has to claim
``readOnlyHint`` for a call to run unasked under standard.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# the specification's defaults for a tool whose server leaves a hint out
HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                 "openWorldHint": True}
FACT_OF_HINT = {"readOnlyHint": "read_only", "destructiveHint": "destructive",
                "idempotentHint": "idempotent", "openWorldHint": "open_world"}
TOOL_FACTS = ("server", "tool", "args", "read_only", "destructive", "idempotent", "open_world", "unattended")


@dataclass(frozen=True)
class ToolCall:
    """One call: which server and tool, the validated arguments, the tool's annotations as listed."""

    server: str
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def hint(self, name: str) -> bool:
        value = self.annotations.get(name)
        return value if isinstance(value, bool) else HINT_DEFAULTS[name]

    @property
    def read_only(self) -> bool:
        return self.hint("readOnlyHint")

    @property
    def text(self) -> str:
        """The call as one line (what a confirmation token is bound to and the audit log shows)."""
        args = json.dumps(dict(self.args), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return f"tool {self.server}.{self.tool} {args}"

    def facts(self, *, unattended: bool = False) -> dict[str, Any]:
        # a read-only tool does not destroy, whatever its destructiveHint says (the specification gives
        # destructiveHint a meaning only when readOnlyHint is false)
        read_only = self.read_only
        hints = {FACT_OF_HINT[name]: self.hint(name) for name in HINT_DEFAULTS}
        hints["destructive"] = hints["destructive"] and not read_only
        return {"server": self.server, "tool": self.tool, "args": dict(self.args), **hints,
                "unattended": unattended}


def example_call(text: str) -> tuple[ToolCall, bool]:
    """A rule example (a JSON object of facts: ``{"tool": "drop", "read_only": false}``) as a call and
    its ``unattended``; facts left out take the defaults above. ValueError when it is not one."""
    data = json.loads(text)
    if not isinstance(data, dict) or set(data) - set(TOOL_FACTS):
        msg = f"a tool rule's example is a JSON object of {', '.join(TOOL_FACTS)}"
        raise ValueError(msg)
    annotations = {hint: data[fact] for hint, fact in FACT_OF_HINT.items() if fact in data}
    call = ToolCall(server=str(data.get("server", "backend")), tool=str(data.get("tool", "example")),
                    args=dict(data.get("args") or {}), annotations=annotations)
    return call, bool(data.get("unattended", False))
