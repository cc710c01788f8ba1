"""A tmp project driven through the real ``canal`` CLI, one process per command (helpers of the tests)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from project_helpers import CliProject as SharedCliProject


@dataclass(frozen=True)
class CliProject(SharedCliProject):
    """The shared CLI project (project_helpers), with a look at every file of its state."""

    def every_file_bytes(self) -> Iterator[tuple[Path, bytes]]:
        for path in sorted(self.state.rglob("*")):
            if path.is_file():
                yield path, path.read_bytes()
