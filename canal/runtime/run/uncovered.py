"""A command that may write a file the checkpoint has no copy of (over the size cap, unreadable) is
confirmed first: ``canal undo`` could not put such a file back, so "undo covers it" does not hold.

"May write": the policy could not read the command (``python3 -c``, ``sh -c``, ``$(...)``), or one of the
paths it would delete or overwrite is such a file or a folder holding one. A path it would delete or
overwrite that the checkpoint left out for another reason (``.gitignore``: a ``.env``, a local database)
is confirmed too; an opaque command is not asked about those (every Python project has .pyc files).
``checkpoints.exclude`` (a person's choice, in canal.yaml) takes a path out of this.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

from canal.host.checkpoints import Checkpoint
from canal.policy import Decision

RULE = "checkpoint-uncovered"
SHOWN = 3


def touched(targets: Sequence[str], uncovered: Sequence[str], workdir: str) -> list[str]:
    """The uncovered workspace paths that ``targets`` (sandbox paths) name or hold."""
    root = PurePosixPath(workdir)
    hit: list[str] = []
    for target in targets:
        path = PurePosixPath(os.path.normpath(target))
        if not (path == root or path.is_relative_to(root)):
            continue
        rel = path.relative_to(root).as_posix()
        hit += [p for p in uncovered if p not in hit and (rel == "." or p == rel or p.startswith(rel + "/"))]
    return hit


def left_out_targets(targets: Sequence[str], workdir: str, left_out: Callable[[str], bool]) -> list[str]:
    """The workspace paths among ``targets`` that exist and that the checkpoint has no copy of."""
    root = PurePosixPath(workdir)
    found = []
    for target in targets:
        path = PurePosixPath(os.path.normpath(target))
        if path != root and path.is_relative_to(root):
            rel = path.relative_to(root).as_posix()
            if rel not in found and left_out(rel):
                found.append(rel)
    return found


def guard(decision: Decision, checkpoint: Checkpoint | None, workdir: str, *, unattended: bool,
          left_out: Callable[[str], bool] = lambda _: False) -> Decision:
    """``decision`` (an allow) made a confirmation (a denial when unattended) when the command may write
    a file ``checkpoint`` could not cover: one over the size cap, when the policy cannot read the command
    or a target names it; any other path the checkpoint left out (``left_out``: .gitignore'd, say) when
    a target names it."""
    if decision.action != "allow" or checkpoint is None:
        return decision
    uncovered = checkpoint.uncovered
    hit = list(uncovered) if decision.opaque else touched(decision.targets, uncovered, workdir)
    hit += [p for p in left_out_targets(decision.targets, workdir, left_out) if p not in hit]
    if not hit:
        return decision
    shown = ", ".join(hit[:SHOWN]) + (f" and {len(hit) - SHOWN} more" if len(hit) > SHOWN else "")
    how = "the policy cannot see what it writes" if decision.opaque else "it would overwrite or delete"
    reason = (f"{RULE}: {how}, and {shown} {'is' if len(hit) == 1 else 'are'} not covered by checkpoint "
              f"{checkpoint.id} (over the size cap, or left out): undo could not put "
              f"{'it' if len(hit) == 1 else 'them'} "
              "back. A person raises checkpoints.max_file_bytes or lists the path in checkpoints.exclude "
              "to stop this question")
    if unattended:
        return dataclasses.replace(decision, action="deny", source="unattended", rule_ids=(RULE,),
                                   reasons=(reason, "unattended run: a command that needs confirmation is "
                                                    "denied"), read_only=False)
    return dataclasses.replace(decision, action="confirm", source="rule", rule_ids=(RULE,), reasons=(reason,),
                               read_only=False)
