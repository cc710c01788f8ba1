"""The blocking operations behind the MCP tools, on one long-lived ``Canal``: commands through the run
pipeline, file operations through ``host.files`` and the trash. Each returns a ``Reply``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from canal.core.next import act
from canal.mcp import schemas as s
from canal.mcp.sandboxes import existing_sandbox
from canal.mcp.words import Words
from canal.runtime.api import Canal
from canal.runtime.run.commands import ways_text
from canal.runtime.run.result import RunResult
from canal.runtime.surface import RemoveOutcome


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


def confirmation_text(reason: str, token: str, approval: str, retry: str, ways: object = None) -> str:
    """CONFIRMATION_REQUIRED in the agent-facing error shape; says who must act and how to re-call.
    ``ways``: how this project's approvers decide it (``approve_ways`` data), so the words are true
    for a project that names none."""
    head = f"CONFIRMATION_REQUIRED\n{reason}. Nothing was run."
    if approval == "human":
        if isinstance(ways, dict):
            said = ways_text(token, ways)
            again = f"{retry}, adding confirm_token \"{token}\""
            return f"{head}\n{said[0].upper()}{said[1:]}.\nNext: after that, {again}"
        return (f"{head}\nAn approver named in canal.yaml must decide it (canal approve {token} --for "
                "AGENT_USER as their own OS user, --ssh-key KEY, or the web console).\n"
                f"Next: after they approved, {retry}, adding confirm_token \"{token}\"")
    return f"{head}\nNext: ask the user; if they agree, {retry}, adding confirm_token \"{token}\""


def rerun_words(retry: str, token: str) -> str:
    """``confirmation.rerun`` in ``_meta``: the same call again with its token, as MCP says it."""
    return f'{retry}, adding confirm_token "{token}"'


def run_reply(result: RunResult, retry: str) -> Reply:
    """The presenter's text; a confirmation becomes CONFIRMATION_REQUIRED with the token to re-call with."""
    data = result.to_json()
    conf = result.confirmation
    if result.status == "confirmation_required" and conf is not None:
        ways = result.next[0].args.get("approvers") if result.next else None
        text = confirmation_text(conf.reason, conf.token, conf.approval, retry, ways)
        wanted = Confirmation(conf.token, conf.approval, conf.reason)
        data["confirmation"]["rerun"] = rerun_words(retry, conf.token)
        return Reply(text, data, is_error=True, confirmation=wanted)
    text = result.text or result.output
    return Reply(text, data, is_error=result.status not in ("ok", "failed"))


class Operations:
    """Commands and file operations of one project. Not thread-safe: the server calls one at a time.

    MCP is the agent's door: file operations here are always guarded (Canal's settings and git's
    code-running files are never written through it)."""

    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    def run_command(self, args: s.RunCommandArgs) -> Reply:
        sandbox = existing_sandbox(self.canal, args.sandbox)
        result = self.canal.run(args.command, timeout_s=args.timeout, confirm=args.confirm_token,
                                sandbox=sandbox, say=Words("run_command"))
        return run_reply(result, "call run_command again with the same command")

    def view(self, args: s.ViewArgs) -> Reply:
        start, end = args.range if args.range is not None else (None, None)
        result = self.canal.files.view(args.path, start=start, end=end)
        return Reply(result.to_text(Words("view")), result.model_dump(mode="json"))

    def _checkpoint(self, command: str) -> str:
        """A checkpoint before Canal's own change to the workspace (a failure stops the operation)."""
        return self.canal.files.checkpoint(command)

    def edit(self, args: s.EditArgs) -> Reply:
        checkpoint = self._checkpoint(f"edit {args.path}")
        result = self.canal.files.edit(args.path, args.old, args.new, replace_all=args.replace_all)
        reply = Reply(result.to_text(Words("edit")), result.model_dump(mode="json"))
        return _with_checkpoint(reply, checkpoint)

    def remove(self, args: s.RemoveArgs) -> Reply:
        checkpoint = self._checkpoint("remove " + " ".join(args.path))
        outcomes = self.canal.files.remove(args.path, recursive=args.recursive)
        data = {"status": "ok", "results": [o.model_dump(mode="json") for o in outcomes]}
        return _with_checkpoint(Reply("\n".join(_removed_line(o) for o in outcomes), data), checkpoint)

    def write(self, args: s.WriteArgs) -> Reply:
        checkpoint = self._checkpoint(f"write {args.path}")
        result = self.canal.files.write(args.path, args.content.encode())
        return _with_checkpoint(Reply(result.to_text(), result.model_dump(mode="json")), checkpoint)

    def trash(self, _: s.TrashArgs) -> Reply:
        entries = self.canal.files.trashed()
        lines = [f"{e.id}  {e.deleted_at:%Y-%m-%d %H:%M:%SZ}  {e.kind:<7} {e.size:>10}  {e.rel_path}"
                 for e in entries]
        if lines:
            lines.append(f"Next: {Words()(act('restore', trash_id=entries[-1].id))}   (any id above)")
        text = "\n".join(lines) if lines else "the trash is empty"
        return Reply(text, {"status": "ok", "entries": [e.model_dump(mode="json") for e in entries]})

    def restore(self, args: s.RestoreArgs) -> Reply:
        checkpoint = self._checkpoint(f"restore {args.trash_id}")
        result = self.canal.files.restore(args.trash_id)
        text = f"restored {result.entry.id} to {result.entry.rel_path} ({result.entry.kind})"
        return _with_checkpoint(Reply(text, result.model_dump(mode="json")), checkpoint)


def _removed_line(outcome: RemoveOutcome) -> str:
    entry = outcome.entry
    if entry is None:
        return f"{outcome.path}: already gone, nothing to do"
    return (f"{outcome.path}: moved to the trash as {entry.id} ({entry.kind}, {entry.size} bytes) | "
            f"undo: {Words()(act('restore', trash_id=entry.id))}")


def _with_checkpoint(reply: Reply, checkpoint: str) -> Reply:
    part = f"checkpoint {checkpoint} (undo: {Words()(act('undo', checkpoint=checkpoint))})"
    head, _, last = reply.text.rpartition("\n")
    if last.startswith("[") and last.endswith("]"):
        text = (f"{head}\n" if head else "") + f"{last[:-1]} | {part}]"
    else:
        text = f"{reply.text}\n[{part}]"
    return Reply(text, {**reply.data, "checkpoint": checkpoint}, reply.is_error, reply.confirmation)
