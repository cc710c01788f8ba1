"""What ``undo`` with no checkpoint named restores, what an undo must leave alone, and the refusals of
retention (a store past its cap, a prune inside the floor by someone other than a person)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from canal.core.next import act
from canal.host.checkpoints import compare
from canal.host.checkpoints.errors import (
    CHECKPOINT_PRUNE_REFUSED,
    CHECKPOINT_STORE_FULL,
    NOTHING_TO_UNDO,
    CheckpointError,
)
from canal.host.checkpoints.models import Checkpoint

if TYPE_CHECKING:
    from canal.host.checkpoints.store import CheckpointStore

# left out on purpose (a person's settings): a later checkpoint covers them only if those change
CHOSEN = (".gitignore", "excluded by canal.yaml")


def uncovered(not_covered: Iterable[tuple[str, str]]) -> list[str]:
    """The paths a checkpoint has no copy of although they may be covered later (over the size cap,
    unreadable...): an undo to it never deletes them."""
    return sorted(path.rstrip("/") for path, reason in not_covered if reason not in CHOSEN)


def pick_undo(store: CheckpointStore) -> tuple[Checkpoint, list[str]]:
    """The newest checkpoint after which something changed (by the command that followed it, or since),
    and the newer ones skipped because nothing did. Records are read newest first, as far as needed."""
    records = store.newest_first()
    newest = next(records, None)
    if newest is None:
        msg = "This project has no checkpoint yet: there is nothing to undo."
        raise NOTHING_TO_UNDO(msg, hint="run a command first: a checkpoint is taken before it")
    if store.changed_since(newest):
        return newest, []
    skipped = [newest.id]
    after = newest
    for cp in records:
        if cp.manifest != after.manifest:
            later = store.manifest(after)  # read in the turn before (the store keeps the last one read)
            if compare.differs(store.manifest(cp), later):  # and this one is kept for the undo itself
                return cp, skipped
        skipped.append(cp.id)
        after = cp
    msg = (f"Nothing changed in the workspace after any of the {len(skipped)} checkpoint(s) kept: "
           "there is nothing to undo. Nothing was restored.")
    raise NOTHING_TO_UNDO(msg, hint="see what each command changed", next=act("checkpoints"),
                        details={"checked": skipped[::-1]})


def store_full(store: CheckpointStore, dropped: Checkpoint) -> CheckpointError:
    settings = store.settings
    msg = (f"The checkpoint store would go past its cap (checkpoints.max_store_bytes = "
           f"{settings.max_store_bytes} bytes), and every older checkpoint is inside the retention floor "
           f"(the last {settings.floor_hours:g} hours and the last {settings.floor_count}) or pinned: "
           "the command did not run, and no checkpoint was dropped to make room.")
    oldest = store.list()[0].id if store.list() else dropped.id
    hint = ("ask the user: a person raises checkpoints.max_store_bytes in canal.yaml and approves it, or "
            "prunes the old checkpoints at a terminal")
    return CHECKPOINT_STORE_FULL(msg, hint=hint, next=[act("checkpoints", "shows what each one holds"),
                                                     act("checkpoints", "a person, at a terminal: drops "
                                                         "every checkpoint before that one", prune=True,
                                                         before=_after(store, oldest)),
                                                     act("config.approve", "after raising the cap")],
                               details={"max_store_bytes": settings.max_store_bytes, "oldest": oldest})


def prune_refused(inside: list[str], before: str) -> CheckpointError:
    shown = ", ".join(inside[:10]) + (f" and {len(inside) - 10} more" if len(inside) > 10 else "")
    msg = (f"Pruning before {before} would drop checkpoints inside the retention floor or pinned ({shown}): "
           "that is a person's act, at a terminal. Nothing was pruned.")
    hint = "ask the user to prune at their terminal; pruning without --before applies retention only"
    return CHECKPOINT_PRUNE_REFUSED(msg, hint=hint, next=act("checkpoints", prune=True),
                        details={"inside_floor": inside, "before": before})


def _after(store: CheckpointStore, oldest: str) -> str:
    """The checkpoint after ``oldest``: pruning before it drops the oldest alone."""
    ids = [c.id for c in store.list()]
    return ids[ids.index(oldest) + 1] if oldest in ids and ids.index(oldest) + 1 < len(ids) else oldest
