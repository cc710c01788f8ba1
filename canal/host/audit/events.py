"""The shapes of the events the pipeline writes, and a one-line summary of each for ``canal audit show``.

Callers pass values already redacted of secrets; the log applies its redactor to strings once more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from canal.host.audit.record import Record


@dataclass(frozen=True)
class Decision:
    action: str  # allow | confirm | deny
    rule_ids: tuple[str, ...]
    source: str  # the policy profile or file that decided
    policy_hash: str
    reason: str = ""


@dataclass(frozen=True)
class RunStarted:
    """Written before a command runs: a crash leaves this intent without its ``run.completed``."""

    event: ClassVar[str] = "run.started"
    sandbox: str
    container_id: str
    image_digest: str
    command: str  # redacted
    cwd: str
    decision: Decision
    approver: str | None = None  # who confirmed (None when policy allowed it outright)
    approval: str | None = None  # the token redeemed, if any
    checkpoint: str | None = None  # the workspace checkpoint taken just before (undo restores it)
    runner: Mapping[str, Any] = field(default_factory=dict)  # the process running it (audit/dangling.py)
    task: str | None = None  # the background task it starts (its run.completed comes when it ends)
    env: Mapping[str, str] | None = None  # the request's own variables (a tool's, a step's), redacted

    def data(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}  # flat: asdict deep-copies each value
        data["decision"] = asdict(self.decision)
        data["runner"] = dict(self.runner)
        for optional in ("task", "env"):
            if data[optional] is None:
                del data[optional]  # a plain command's record stays as it was
        return data


@dataclass(frozen=True)
class RunCompleted:
    event: ClassVar[str] = "run.completed"
    started: str  # record id of the matching run.started
    sandbox: str
    exit_code: int | None
    reason: str  # sandbox.result.EndReason value
    duration_ms: int
    output_bytes: int
    output_sha256: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        flat = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return {**flat, **dict(self.extra)}


def summarize(rec: Record) -> str:
    """What one record says, in one line a person or an agent can scan."""
    d = rec.data
    if rec.event == "run.started":
        dec = d.get("decision") or {}
        rules = ",".join(dec.get("rule_ids") or []) or "-"
        who = f" | approved by {d['approver']}" if d.get("approver") else ""
        task = f" | task {d['task']}" if d.get("task") else ""
        return f"$ {d.get('command')}  [{dec.get('action')} {rules} | sandbox {d.get('sandbox')}{who}{task}]"
    if rec.event == "run.completed":
        seconds = int(d.get("duration_ms") or 0) / 1000
        sha = str(d.get("output_sha256") or "")[:12]
        return (f"exit {d.get('exit_code')} {d.get('reason')} {seconds:.2f}s, {d.get('output_bytes')} bytes "
                f"sha256 {sha} (for {d.get('started')})")
    if rec.event == "run.interrupted":
        return f"no outcome for {d.get('started')}: {d.get('reason')}"
    if rec.event == "state.revision":
        return f"{d.get('doc')} revision {d.get('revision')}"
    return _pairs(d)


def _pairs(d: Mapping[str, Any], limit: int = 200) -> str:
    text = " ".join(f"{k}={_short(v)}" for k, v in sorted(d.items()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Any) -> str:
    if isinstance(value, str):
        return value if " " not in value else repr(value)
    if isinstance(value, list | tuple):
        return ",".join(_short(v) for v in value)
    return str(value)
