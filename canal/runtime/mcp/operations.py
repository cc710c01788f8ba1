"""The blocking operations behind the MCP tools, on one long-lived ``Canal``: commands through the run
pipeline, file operations through ``runtime.files`` and the trash. Each returns a ``Reply``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canal.runtime.api import Canal
from canal.runtime.files import Protected, Workspace, edit_file, view_path
from canal.runtime.mcp import schemas as s
from canal.runtime.result import RunResult
from canal.runtime.trash import RemoveOutcome, remove_paths
from canal.runtime.trust.snapshot import settings_files


@dataclass(frozen=True)
class Confirmation:
    """A confirmation the agent (or a person) must give; ``approval`` is who may give it."""

    token: str
    approval: str  # "agent" | "human"
    reason: str


@dataclass(frozen=True)
class Reply:
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    confirmation: Confirmation | None = None


def confirmation_text(reason: str, token: str, approval: str, retry: str) -> str:
    """CONFIRMATION_REQUIRED in the agent-facing error shape; says who must act and how to re-call."""
    head = f"CONFIRMATION_REQUIRED\n{reason}. Nothing was run."
    if approval == "human":
        return (f"{head}\nA person must approve it: ask the user to run `canal approve {token}` in a "
                f"terminal.\nNext: after they approved, {retry}, adding confirm_token \"{token}\"")
    return f"{head}\nNext: ask the user; if they agree, {retry}, adding confirm_token \"{token}\""


def run_reply(result: RunResult, retry: str) -> Reply:
    """The presenter's text; a confirmation becomes CONFIRMATION_REQUIRED with the token to re-call with."""
    data = result.to_json()
    conf = result.confirmation
    if result.status == "confirmation_required" and conf is not None:
        text = confirmation_text(conf.reason, conf.token, conf.approval, retry)
        wanted = Confirmation(conf.token, conf.approval, conf.reason)
        return Reply(text, data, is_error=True, confirmation=wanted)
    text = result.text or result.output
    return Reply(text, data, is_error=result.status not in ("ok", "failed"))


class Operations:
    """Commands and file operations of one project. Not thread-safe: the server calls one at a time."""

    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    @property
    def _workspace(self) -> Workspace:
        return Workspace.at(self.canal.project_dir)

    @property
    def _guard(self) -> Protected:
        """MCP is the agent's door: Canal's settings and git's code-running files are never written here."""
        return Protected.of(settings_files(self.canal.project_dir))

    def run_command(self, args: s.RunCommandArgs) -> Reply:
        result = self.canal.run(args.command, timeout_s=args.timeout, confirm=args.confirm_token,
                                sandbox=args.sandbox)
        return run_reply(result, "call run_command again with the same command")

    def view(self, args: s.ViewArgs) -> Reply:
        start, end = args.range if args.range is not None else (None, None)
        result = view_path(self._workspace, args.path, start=start, end=end,
                           redactor=self.canal.services.redactor)
        return Reply(result.to_text(), result.model_dump(mode="json"))

    def _checkpoint(self, command: str) -> str:
        """A checkpoint before Canal's own change to the workspace (a failure stops the operation)."""
        return self.canal.services.checkpoints.take(kind="file", command=command, actor=self.canal.actor).id

    def edit(self, args: s.EditArgs) -> Reply:
        services = self.canal.services
        checkpoint = self._checkpoint(f"edit {args.path}")
        result = edit_file(self._workspace, args.path, args.old, args.new, replace_all=args.replace_all,
                           redactor=services.redactor, audit=services.audit, actor=self.canal.actor,
                           guard=self._guard)
        return _with_checkpoint(Reply(result.to_text(), result.model_dump(mode="json")), checkpoint)

    def remove(self, args: s.RemoveArgs) -> Reply:
        paths = [Path(p) for p in args.path]
        checkpoint = self._checkpoint("remove " + " ".join(args.path))
        outcomes = remove_paths(self.canal.services.trash, self.canal.project_dir, paths,
                                recursive=args.recursive, actor=self.canal.actor, guard=self._guard)
        data = {"status": "ok", "results": [o.model_dump(mode="json") for o in outcomes]}
        return _with_checkpoint(Reply("\n".join(_removed_line(o) for o in outcomes), data), checkpoint)

    def restore(self, args: s.RestoreArgs) -> Reply:
        checkpoint = self._checkpoint(f"restore {args.trash_id}")
        result = self.canal.services.trash.restore(args.trash_id, actor=self.canal.actor, guard=self._guard)
        text = f"restored {result.entry.id} to {result.entry.rel_path} ({result.entry.kind})"
        return _with_checkpoint(Reply(text, result.model_dump(mode="json")), checkpoint)


def _removed_line(outcome: RemoveOutcome) -> str:
    entry = outcome.entry
    if entry is None:
        return f"{outcome.path}: already gone, nothing to do"
    return (f"{outcome.path}: moved to the trash as {entry.id} ({entry.kind}, {entry.size} bytes) | "
            f"undo: restore {{\"trash_id\": \"{entry.id}\"}}")


def _with_checkpoint(reply: Reply, checkpoint: str) -> Reply:
    part = f'checkpoint {checkpoint} (undo: undo {{"checkpoint": "{checkpoint}"}})'
    head, _, last = reply.text.rpartition("\n")
    if last.startswith("[") and last.endswith("]"):
        text = (f"{head}\n" if head else "") + f"{last[:-1]} | {part}]"
    else:
        text = f"{reply.text}\n[{part}]"
    return Reply(text, {**reply.data, "checkpoint": checkpoint}, reply.is_error, reply.confirmation)
