"""A command that may write a file the checkpoint has no copy of (over the size cap, unreadable) is
confirmed first: ``canal undo`` could not put such a file back, so "undo covers it" does not hold.

"May write": the policy could not read the command (``python3 -c``, ``sh -c``, ``$(...)``), or one of the
paths it would delete or overwrite is such a file or a folder holding one. ``checkpoints.exclude`` (a
person's choice, in canal.yaml) takes a path out of this: it is left out on purpose.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import PurePosixPath

from canal.policy import Decision
from canal.runtime.checkpoints import Checkpoint

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


def guard(decision: Decision, checkpoint: Checkpoint | None, workdir: str, *, unattended: bool) -> Decision:
    """``decision`` (an allow) made a confirmation (a denial when unattended) when the command may write
    a file ``checkpoint`` could not cover."""
    if decision.action != "allow" or checkpoint is None or not checkpoint.uncovered:
        return decision
    hit = list(checkpoint.uncovered) if decision.opaque else touched(decision.targets, checkpoint.uncovered,
                                                                     workdir)
    if not hit:
        return decision
    shown = ", ".join(hit[:SHOWN]) + (f" and {len(hit) - SHOWN} more" if len(hit) > SHOWN else "")
    how = "the policy cannot see what it writes" if decision.opaque else "it would overwrite or delete"
    reason = (f"{RULE}: {how}, and {shown} {'is' if len(hit) == 1 else 'are'} not covered by checkpoint "
              f"{checkpoint.id} (over the size cap): undo could not put {'it' if len(hit) == 1 else 'them'} "
              "back. A person raises checkpoints.max_file_bytes or lists the path in checkpoints.exclude "
              "to stop this question")
    if unattended:
        return dataclasses.replace(decision, action="deny", source="unattended", rule_ids=(RULE,),
                                   reasons=(reason, "unattended run: a command that needs confirmation is "
                                                    "denied"), read_only=False)
    return dataclasses.replace(decision, action="confirm", source="rule", rule_ids=(RULE,), reasons=(reason,),
                               read_only=False)
