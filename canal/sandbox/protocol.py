"""The session agent's protocol as the host speaks it: typed requests, validated replies.

The agent (``canal.sandbox.agent``, stdlib-only Python inside the sandbox) reads one JSON header per
request and answers with one final JSON frame that echoes the request's nonce. It runs as the sandbox
user, next to the commands it runs, so what it answers is untrusted. The host builds every request from
a model here and checks every final reply against its model before anything reads it: an unknown field,
a wrong type, a missing state or a negative count is out of protocol, and ``SessionBroken`` says which
field and why (the caller drops the session, as for one that went silent). """

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from canal.sandbox.errors import SpecInvalid
from canal.sandbox.result import EndReason, SessionState


class SessionBroken(Exception):
    """The session died, wedged or spoke out of protocol; ``why`` says which."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def wire(self) -> dict[str, Any]:
        """The JSON header the agent reads (``None`` fields left out: the agent reads them as unset)."""
        return self.model_dump(mode="json", exclude_none=True)


class WorkspaceQuota(_Request):
    """The bind-mounted workspace's quota: the agent watches it from the first request naming it."""

    path: str
    bytes: int = Field(ge=0)


class Hello(_Request):
    """The first request of a session: the agent answers with its pid (and warms its shell)."""

    op: Literal["hello"] = "hello"
    quota: WorkspaceQuota | None = None


class RunCommand(_Request):
    """One command: a line for the session's bash (``shell``, ``command``) or an exact ``argv``."""

    op: Literal["run"] = "run"
    shell: bool = False
    command: str | None = None
    argv: tuple[str, ...] | None = None
    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str | None = None
    expect_state: str | None = None  # the digest of the session state the policy decided on
    quota: WorkspaceQuota | None = None
    spare: tuple[int, int] | None = None  # the background agent (pid, start time): its tree outlives this
    marks: tuple[str, ...] | None = None  # running tasks' markers: their processes are spared too


class SpawnSpec(_Request):
    """Where a background task starts: the agent writes its cwd and exported variables to a 0600 file of
    its private folder, for the background agent to read once (no value travels through the host)."""

    op: Literal["spawn_spec"] = "spawn_spec"
    expect_state: str | None = None
    quota: WorkspaceQuota | None = None
    spare: tuple[int, int] | None = None
    marks: tuple[str, ...] | None = None


def run_command(command: str | Sequence[str], *, timeout_s: float | None = None,
                idle_timeout_s: float | None = None, env: Mapping[str, str] | None = None,
                workdir: str | None = None, expect_state: str | None = None,
                quota: WorkspaceQuota | None = None) -> RunCommand:
    """The request for ``command``: a str is a shell line, a sequence an argv (non-empty, all str)."""
    common: dict[str, Any] = {"timeout_s": timeout_s, "idle_timeout_s": idle_timeout_s,
                              "env": dict(env or {}), "workdir": workdir,
                              "expect_state": expect_state or None, "quota": quota}
    if isinstance(command, str):
        return RunCommand(shell=True, command=command, **common)
    argv = list(command)
    if not argv or not all(isinstance(a, str) for a in argv):
        msg = "An argv command needs at least one element, all strings."
        raise SpecInvalid(msg, hint="pass a list such as ['ls', '-la']", details={"argv": repr(argv)})
    return RunCommand(argv=tuple(argv), **common)


class Control(TypedDict, total=False):
    """A control frame for the request in flight: stdin bytes, end of stdin, kill its command, or (for
    a request that said ``hold``) let it start or cancel it."""

    ctl: Literal["stdin", "eof", "kill", "go", "cancel"]
    id: str
    signal: str
    stdin_len: int


class _Reply(BaseModel):
    """Strict: no coercion ("3" is not 3, true is not 1). Decoded by ``json.loads`` first, like the agent
    encodes (a folder name that is not UTF-8 travels as a lone surrogate, which JSON parsers in Rust
    refuse), so arrays arrive as lists."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class AgentState(_Reply):
    """The session as the next command will see it (the agent sends it with every final reply)."""

    cwd: str
    changed: list[str] = Field(default_factory=list)
    path: str = ""
    digest: str = ""  # the agent's own SessionState.digest(); the host computes its own

    def session(self) -> SessionState:
        return SessionState(cwd=self.cwd, changed=tuple(self.changed), path=self.path)


class _Final(_Reply):
    id: str | None = None  # the request's nonce (None only in replies the host makes itself)
    state: AgentState | None = None


class HelloReply(_Final):
    pid: int = Field(gt=0)
    protected: list[int] = Field(default_factory=list)


class QuotaReport(_Reply):
    limit: int = Field(ge=0)
    used: int = Field(ge=0)


class RunReply(_Final):
    """How a command ended, as the agent saw it (or as the host says when the session broke)."""

    reason: Annotated[EndReason, Field(strict=False)]  # one of its values, as JSON sends it
    exit_code: int | None
    detail: str = ""
    survivors: list[int] = Field(default_factory=list)  # processes still alive after the kill
    oom_kills: int = Field(default=0, ge=0)
    pid_limit_hits: int = Field(default=0, ge=0)
    swept: int = Field(default=0, ge=0)  # processes the command left running, killed when it ended
    signal: str | None = None  # for an interrupted command: the signal the client sent
    quota: QuotaReport | None = None  # for a command stopped at the workspace quota


class SpawnReply(_Final):
    """The file a background task's spec was written to (``spec``), or why not (a non-zero exit code)."""

    exit_code: int
    reason: str = "exited"
    spec: str | None = None


R = TypeVar("R", bound=_Final)


def parse_reply(payload: bytes, model: type[R], nonce: str) -> R:
    """The agent's final frame for the request ``nonce``, checked; ``SessionBroken`` when it is not one."""
    try:
        data = json.loads(payload)
    except ValueError as exc:
        msg = f"the session's reply is out of protocol (not JSON: {exc})"
        raise SessionBroken(msg) from None
    try:
        reply = model.model_validate(data)
    except ValidationError as exc:
        msg = f"the session's reply is out of protocol ({_why(exc)})"
        raise SessionBroken(msg) from None
    if reply.id != nonce:
        msg = "the session answered another request (nonce mismatch)"
        raise SessionBroken(msg)
    if reply.state is None:
        msg = "the session's reply is out of protocol (state: missing)"
        raise SessionBroken(msg)
    return reply


def _why(exc: ValidationError) -> str:
    """The first problem, by field (never the value: it may be long or hold a secret)."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "reply"
    more = f"; {len(errors) - 1} more" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"
