"""MCP's words for next actions: the tool call to make, or, for what only a person can do, what to ask
the user to run in a terminal. ``Words(tool)`` knows which tool the reply answers, so "the same call
again" names it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from canal.core.errors import CanalError
from canal.core.next import Kind, NextAction
from canal.runtime.errors import Redact, error_json, render_error
from canal.runtime.run.commands import command_line, ways_text

Args = Mapping[str, Any]


def call(tool: str, args: Mapping[str, Any]) -> str:
    return f"{tool} {json.dumps(dict(args), ensure_ascii=False)}"


def _run(a: Args) -> str:
    return call("run_command", {"command": a.get("command", "CMD")})


def _view(a: Args) -> str:
    return call("view", {"path": a.get("path", "."), **({"range": a["range"]} if a.get("range") else {})})


def _edit(a: Args) -> str:
    extra = {"replace_all": True} if a.get("all") else {}
    return call("edit", {"path": a["path"], "old": "<exact text>", "new": "<replacement>", **extra})


def _remove(a: Args) -> str:
    return call("remove", {"path": a["path"], **({"recursive": True} if a.get("recursive") else {})})


def _restore(a: Args) -> str | None:
    if a.get("to") or a.get("force"):
        return None  # the restore tool puts an item back where it was, and never over a file
    return call("restore", {"trash_id": a["trash_id"]})


def _workflow(action: str, *fields: str) -> Callable[[Args], str]:
    def word(a: Args) -> str:
        data: dict[str, Any] = {"action": action}
        data.update({f: a[f] for f in fields if a.get(f) is not None})
        if a.get("gate"):
            data["gate_data"] = a["gate"]
        if a.get("confirm"):
            data["confirm_token"] = a["confirm"]
        return call("workflow", data)
    return word


_CALLS: dict[Kind, Callable[[Args], str | None]] = {
    "run": _run,
    "view": _view,
    "edit": _edit,
    "remove": _remove,
    "restore": _restore,
    "workflow.start": _workflow("start", "name"),
    "workflow.advance": _workflow("advance", "run_id"),
    "workflow.current": _workflow("current", "run_id"),
    "workflow.show": _workflow("current", "run_id"),
    "workflow.list": lambda a: call("workflow", {"action": "list"}),
    "write": lambda a: call("write", {"path": a["path"], "content": "<the whole new content>"}),
    "trash.list": lambda a: call("trash", {}),
    "tool.list": lambda a: call("list_capabilities", {}),
    "tool.meta": lambda a: call("describe_capability", {"name": a["name"]}),
    "tool.call": lambda a: call("call_capability", {"name": a["name"], "arguments": a.get("args", {})}),
    "checkpoints": lambda a: call("checkpoints", {}),
    "diff": lambda a: call("diff", {k: a[k] for k in ("checkpoint",) if a.get(k)}),
    "undo": lambda a: call("undo", {k: a[k] for k in ("checkpoint",) if a.get(k)}),
    "fork.changes": lambda a: call("changes", {"name": a["name"]}),
    "fork.apply": lambda a: call("apply", {"name": a["name"],
                                           **({"paths": list(a["paths"])} if a.get("paths") else {}),
                                           **({"confirm_token": a["token"]} if a.get("token") else {})}),
    "fork.discard": lambda a: call("discard", {"name": a["name"]}),
    "fork.start": lambda a: call("fork", {"name": a["name"], **({"from_checkpoint": a["from"]}
                                                                if a.get("from") else {})}),
    "task.start": lambda a: call("task_start", {"command": a.get("command", "CMD"),
                                                **({"name": a["name"]} if a.get("name") else {})}),
    "task.list": lambda a: call("task_list", {}),
    "task.show": lambda a: call("task_show", {"task_id": a.get("task", "ID")}),
    "task.logs": lambda a: call("task_show", {"task_id": a.get("task", "ID")}),
    "task.wait": lambda a: call("task_wait", {"task_id": a.get("task", "ID"),
                                              **({"timeout": a["timeout"]} if a.get("timeout") else {})}),
    "task.cancel": lambda a: call("task_cancel", {"task_id": a.get("task", "ID")}),
}
# Only a person runs these, at a terminal: the agent is told to ask the user.
OPERATOR: frozenset[Kind] = frozenset({
    "approve", "trash.purge", "image.build",
    "policy.check", "policy.show", "policy.test", "workflow.abort", "workflow.runs",
    "workflow.init", "workflow.add_step", "workflow.validate", "discover", "key.show", "key.rotate",
    "key.retire", "audit.show", "audit.verify", "state.verify", "config.status", "config.approve",
    "up", "down", "ps", "gc", "doctor", "server.logs", "server.stop", "audit.checkpoint", "audit.ship",
    "egress.log", "port_forward",
})


class Words:
    """``Words("run_command")(action)``: how an agent connected over MCP takes ``action``."""

    then = "then"

    def __init__(self, tool: str = "") -> None:
        self.tool = tool

    def same_call(self) -> str:
        return f"call {self.tool} again with the same arguments" if self.tool else "make the same call again"

    def __call__(self, action: NextAction) -> str | None:
        a = action.args
        if action.kind == "confirm":
            token = a.get("token", "TOKEN")
            return self._approved_first(a, f"{self.same_call()}, adding confirm_token \"{token}\"")
        if action.kind == "retry":
            fresh = " without confirm_token, for a fresh one" if a.get("fresh_token") else ""
            return self.same_call() + fresh
        if action.kind in OPERATOR:
            return f"ask the user to run `{command_line(action)}` in a terminal"
        worded = _CALLS[action.kind](a)
        return None if worded is None else self._approved_first(a, f"call {worded}")

    @staticmethod
    def _approved_first(a: Args, then: str) -> str:
        """``then``, after a person's approval when the confirmation needs one."""
        if a.get("approval") != "human":
            return then
        token = a.get("token", "TOKEN")
        ways = ways_text(token, a.get("approvers"))
        return f"a person must approve it: ask the user ({ways}); after they approved, {then}"


def error_text(exc: CanalError, tool: str = "", redact: Redact | None = None) -> str:
    return render_error(exc, redact, Words(tool))


def error_data(exc: CanalError, tool: str = "", redact: Redact | None = None) -> dict[str, Any]:
    return error_json(exc, redact, Words(tool))
