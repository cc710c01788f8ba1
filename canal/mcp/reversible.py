"""The MCP tools that make work reversible: checkpoints, diff and undo on the project; fork, changes,
apply and discard for autonomous work on a copy. Each returns a ``Reply``."""

from __future__ import annotations

from canal.core.display import visible
from canal.core.errors import ConfirmationRequired
from canal.mcp import schemas as s
from canal.mcp.operations import Confirmation, Reply, confirmation_text, rerun_words
from canal.runtime.api import Canal
from canal.runtime.surface import Change


def _lines(changes: list[Change]) -> list[str]:
    return [visible(f"{c.kind:<9} {c.path}" + (f"  ({c.detail})" if c.detail else "")) +
            ("  [binary]" if c.binary else "") for c in changes]


class Reversible:
    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    def checkpoints(self, args: s.CheckpointsArgs) -> Reply:
        history = self.canal.checkpoints(args.limit)
        rows = history.rows
        lines = [f"{c.id} CORRUPT record {c.record}: {c.why}; never restored from" for c in history.corrupt]
        if history.older:
            plural = "s" if history.older > 1 else ""
            lines.append(f"{history.older} older checkpoint{plural} not listed: call checkpoints with a "
                         f"higher limit (at most {s.MAX_LISTED})")
        for row in rows:
            cp, after = row.checkpoint, row.changed_after
            counts = f"+{after.added} ~{after.modified} -{after.deleted}"
            lines.append(visible(f"{cp.id} {cp.created_at[:19]} {cp.command or cp.kind} | changed after: "
                                 f"{counts} {', '.join(after.paths)}"))
            lines.extend(f"    not covered: {visible(n.path)} ({n.reason})" for n in cp.not_covered[:5])
        text = "\n".join(lines) if lines else "no checkpoints yet (one is taken before each command)"
        return Reply(text, {"status": "ok", "checkpoints": [r.model_dump(mode="json") for r in rows],
                            "corrupt": [c.model_dump(mode="json") for c in history.corrupt],
                            "older": history.older})

    def diff(self, args: s.DiffArgs) -> Reply:
        result = self.canal.diff(args.checkpoint)
        if not result.changes:
            return Reply(f"no change since {result.checkpoint}", result.model_dump(mode="json"))
        text = result.patch + "\n".join(_lines(result.changes))
        text += f'\n[{len(result.changes)} change(s) since {result.checkpoint} | undo {{"checkpoint": ' \
                f'"{result.checkpoint}"}}]'
        return Reply(text, result.model_dump(mode="json"))

    def undo(self, args: s.UndoArgs) -> Reply:
        result = self.canal.undo(args.checkpoint)
        skipped = [f"skipped {', '.join(result.skipped)}: nothing changed after them"][:bool(result.skipped)]
        undid = f"undid: {visible(result.command) or result.kind}"
        text = "\n".join([*_lines(result.changes), *skipped, undid,
                          f"restored {len(result.changes)} path(s) to {result.restored_to} | revert this "
                          f'undo: undo {{"checkpoint": "{result.before_undo}"}}'])
        text += "".join(f"\nleft alone: {visible(n.path)} ({n.reason})" for n in result.left_alone)
        text += "".join(f"\nrestored without its setuid/setgid bits (Canal never writes a privileged file): "
                        f"{visible(path)}" for path in result.stripped)
        return Reply(text, result.model_dump(mode="json"))

    def fork(self, args: s.ForkArgs) -> Reply:
        fork = self.canal.fork(args.name, from_checkpoint=args.from_checkpoint)
        text = (f"fork {fork.name} is up (a copy of the project at {fork.base}). Run there with "
                f'run_command {{"sandbox": "{fork.name}", "command": "..."}}: no confirmations, nothing '
                f"reaches the project. Then changes, apply (the user confirms) or discard.")
        return Reply(text, fork.model_dump(mode="json", exclude={"hmac", "key_id"}))

    def changes(self, args: s.ForkNameArgs) -> Reply:
        result = self.canal.changes(args.name)
        text = result.patch + "\n".join(_lines(result.changes))
        text += "".join(f"\nnot carried by apply: {visible(n.path)} ({n.reason})" for n in result.not_carried)
        text += f"\n[{len(result.changes)} change(s) in fork {args.name} since {result.base}]"
        return Reply(text.lstrip("\n"), result.model_dump(mode="json"))

    def apply(self, args: s.ApplyArgs) -> Reply:
        try:
            result = self.canal.apply(args.name, args.paths, confirm=args.confirm_token)
        except ConfirmationRequired as asked:
            token, approval = asked.details["token"], asked.details["approval"]
            reason = asked.message.removesuffix("\nNothing was applied.")
            retry = "call apply again with the same name and paths"
            text = confirmation_text(reason, token, approval, retry)
            data = {**asked.details, "confirmation": {**asked.details["confirmation"],
                                                      "rerun": rerun_words(retry, token)}}
            return Reply(text.replace("Nothing was run.", "Nothing was applied."), data,
                         is_error=True, confirmation=Confirmation(token, approval, reason))
        if not result.applied:
            return Reply(f"fork {args.name} has no change to apply", result.model_dump(mode="json"))
        text = "\n".join([*_lines(result.applied),
                          f"applied {len(result.applied)} change(s) | undo the apply: "
                          f'undo {{"checkpoint": "{result.checkpoint}"}}'])
        text += "".join(f"\napplied without its setuid/setgid bits (Canal never writes a privileged file): "
                        f"{visible(path)}" for path in result.stripped)
        return Reply(text, result.model_dump(mode="json"))

    def discard(self, args: s.ForkNameArgs) -> Reply:
        fork = self.canal.discard(args.name)
        return Reply(f"fork {fork.name} discarded", {"status": "ok", "discarded": fork.name})
