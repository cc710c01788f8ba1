"""The ``checkpoints`` section of canal.yaml: what is covered, the caps, and retention."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class CheckpointSettings(BaseModel):
    """Defaults cover a typical source tree; every cap says so when it is reached."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gitignore: bool = True  # paths .gitignore'd (and not yet covered) are left out, and said so
    exclude: tuple[str, ...] = ()  # more gitignore-style patterns, relative to the project
    max_file_bytes: int = Field(default=64 * MIB, ge=0)  # a bigger file is not covered (said so)
    # a command that may write a file no checkpoint covers (over the cap) is confirmed first
    uncovered_writes: Literal["confirm", "allow"] = "confirm"
    max_files: int = Field(default=200_000, ge=1)  # a bigger workspace is refused: exclude paths
    max_workspace_bytes: int = Field(default=2048 * MIB, ge=0)
    # the floor: checkpoints younger than floor_hours, and the newest floor_count, are never pruned by
    # retention (so never by the agent's own commands); only a person prunes inside it
    floor_hours: float = Field(default=24, ge=0)
    floor_count: int = Field(default=20, ge=1)
    keep: int = Field(default=100, ge=1)  # outside the floor, the newest N checkpoints are kept
    keep_days: float = Field(default=14, gt=0)  # and older than this are pruned (never the newest)
    max_store_bytes: int = Field(default=4096 * MIB, ge=0)  # outside the floor the oldest go first past
    # this; when the floor alone is bigger, a checkpoint is refused (CHECKPOINT_STORE_FULL)
