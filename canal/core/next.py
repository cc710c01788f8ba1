"""Next actions as data: what the reader should do next, never in any front end's words.

A leaf or a service that wants to say "run this next" returns (or raises with) ``NextAction`` values:
a ``kind`` from the table below and its arguments (a run id, a token, example gate data...). Each front
end words them for its reader: the CLI as a shell command (``canal workflow advance r_1 ...``), MCP as
a tool call (``workflow {"action": "advance", ...}``), and ``describe`` below for anyone else. A test
checks that every front end words every kind.

``Say`` is how a front end hands its words down, for text the library composes on its behalf (a
result's footer, for instance): it words one action (``None`` when its reader has no way to take it)
and says how the actions follow the prose lead (the CLI says "then run").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Kind = Literal[
    # the agent's own operations (both front ends have them)
    "run",  # {command, sandbox?}: run a shell command in the sandbox
    "confirm",  # {token, approval, command?, sandbox?}: the refused call again, with its token
    "retry",  # {fresh_token?}: the same call again (without the token it had, for a fresh one)
    "view",  # {path, range?}
    "edit",  # {path, all?}
    "write",  # {path}
    "remove",  # {path, recursive?}
    "restore",  # {trash_id, to?, force?}
    "workflow.start",  # {name}
    "workflow.advance",  # {run_id, gate?, confirm?, retry?}: gate is example data for the current step
    "workflow.current",  # {run_id?}
    "workflow.show",  # {run_id}
    "tool.list",
    "tool.meta",  # {name}
    "tool.call",  # {name, args?}
    # what a person (the operator) does, from a terminal
    "approve",  # {token}: a person approves a pending confirmation
    "undo",  # {checkpoint}
    "checkpoints",
    "diff",  # {checkpoint?}
    "trash.list",
    "trash.purge",  # {older_than}
    "image.build",
    "policy.check",  # {command, cwd?, session_env?, unattended?}: decided as the session would
    "policy.show",
    "policy.test",  # {file}
    "workflow.abort",  # {run_id}
    "workflow.runs",
    "workflow.list",
    "workflow.init",  # {name}
    "workflow.add_step",  # {name, id?, type?}
    "workflow.validate",  # {name?}
    "discover",
    "key.show",
    "key.rotate",
    "key.retire",  # {key_id}
    "audit.show",
    "audit.verify",  # {checkpoint?}
    "state.verify",
    "config.status",
    "config.approve",
    "fork.changes",  # {name}
    "fork.apply",  # {name, paths?, token?, approval?}
    "fork.discard",  # {name}
    "up",  # {sandbox}
    "down",  # {sandbox}
    "ps",
    "gc",
    "fork.start",  # {name, from?}
    "server.logs",
    "server.stop",  # {all?}: the next command starts a server again
    "audit.checkpoint",
    "audit.ship",  # send what the OTLP collector has not had yet
    "egress.log",  # {denied?}
    "doctor",
    # background tasks (docs/tasks.md)
    "task.start",  # {command?, name?}
    "task.list",
    "task.show",  # {task}
    "task.logs",  # {task, follow?}
    "task.wait",  # {task, timeout?}
    "task.cancel",  # {task}
    "port_forward",  # {spec, sandbox?}: a person reaches a port inside from the host
]


@dataclass(frozen=True)
class NextAction:
    """One thing to do next. ``note`` is said after it, in words that hold for every reader.

    A plain dataclass (no pydantic): the thin client renders errors that carry these, and it must
    stay light. Pydantic models hold it as a field all the same."""

    kind: Kind
    args: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "args": dict(self.args), "note": self.note}


def act(kind: Kind, note: str = "", **args: Any) -> NextAction:
    """``act("workflow.show", run_id="wr_1")``: arguments left ``None`` are dropped."""
    return NextAction(kind=kind, args={k: v for k, v in args.items() if v is not None}, note=note)


class Say(Protocol):
    then: str  # joins the prose lead to the actions: "ask the user, {then}: ..."

    def __call__(self, action: NextAction) -> str | None: ...


class Plain:
    """Words for a reader with no front end of its own (the Python API): the kind and its data."""

    then = "then"

    def __call__(self, action: NextAction) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in action.args.items())
        return f"{action.kind}({args})"


describe = Plain()


def say_all(actions: Sequence[NextAction], say: Say, *, lead: str = "") -> str:
    """The ``Next:`` sentence: ``lead`` (prose), then each action the reader can take, as alternatives."""
    worded = []
    for action in actions:
        words = say(action)
        if words:
            worded.append(words + (f"   ({action.note})" if action.note else ""))
    said = "   or   ".join(worded)
    if lead and said:
        return f"{lead}, {say.then}: {said}"
    return lead or said
