"""The ``storage:`` section of canal.yaml: how much Canal keeps on the host, and what happens at the cap.

Example::

    storage:
      output_per_stream: 256m   # one stream of one command; past it the middle goes, head and tail stay
      outputs_total: 2g         # every saved output of the project; the oldest go first
      backup_per_command: 1g    # what one confirmed command backs up; past it BACKUP_TOO_LARGE
      trash_total: 5g           # the whole trash; past it TRASH_FULL (nothing is evicted)
      file_per_operation: 8m    # one file that canal view / edit / write (CLI and MCP) reads or writes

These are safety settings: raising one is a person's decision (trusted configuration).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from canal.sandbox.spec import Bytes

MIB = 1024**2
GIB = 1024**3


class StorageLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    output_per_stream: Bytes = 256 * MIB
    outputs_total: Bytes = 2 * GIB
    backup_per_command: Bytes = 1 * GIB
    trash_total: Bytes = 5 * GIB
    file_per_operation: Bytes = 8 * MIB  # past it FILE_TOO_LARGE, nothing written
