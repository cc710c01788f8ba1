"""Copy an output stream into a file without holding it in memory, in the kernel when possible."""

from __future__ import annotations

import io
import os
import shutil
from typing import BinaryIO

_STEP = 1 << 30


def copy_stream(src: BinaryIO, dest: BinaryIO, chunk_bytes: int) -> None:
    """Copy all of ``src`` (from offset 0) to the empty file ``dest``.

    Between two real files this is ``copy_file_range`` (no trip through user space, as ``cat`` does);
    otherwise, or when the filesystem refuses it, a copy through one bounded buffer.
    """
    try:
        src_fd, dest_fd = src.fileno(), dest.fileno()
        offset = 0
        while done := os.copy_file_range(src_fd, dest_fd, _STEP, offset, offset):
            offset += done
    except (OSError, io.UnsupportedOperation):
        src.seek(0)
        dest.seek(0)
        dest.truncate()
        shutil.copyfileobj(src, dest, chunk_bytes)
