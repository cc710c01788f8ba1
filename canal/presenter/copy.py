"""Copy an output stream into a file without holding it in memory, in the kernel when possible."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO, TypeVar

T = TypeVar("T")
_STEP = 1 << 30


def copy_while(src: BinaryIO, dest: BinaryIO, chunk_bytes: int, work: Callable[[], T]) -> T:
    """Copy all of ``src`` to the empty file ``dest`` while ``work()`` reads ``src``; its result.

    Between two real files the copy is ``copy_file_range`` on a worker thread (no trip through user
    space, as ``cat`` does; it passes explicit offsets, so ``work`` keeps the file position to itself).
    Otherwise, or when the filesystem refuses it, the copy goes through one bounded buffer.
    """
    try:
        fds = (src.fileno(), dest.fileno())
    except (OSError, io.UnsupportedOperation):
        _copy_buffered(src, dest, chunk_bytes)
        src.seek(0)
        return work()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="canal-copy") as pool:
        copying = pool.submit(_copy_in_kernel, *fds)
        result = work()
        try:
            copying.result()
        except OSError:
            _copy_buffered(src, dest, chunk_bytes)
    return result


def _copy_in_kernel(src_fd: int, dest_fd: int) -> None:
    offset = 0
    while done := os.copy_file_range(src_fd, dest_fd, _STEP, offset, offset):
        offset += done


def _copy_buffered(src: BinaryIO, dest: BinaryIO, chunk_bytes: int) -> None:
    src.seek(0)
    dest.seek(0)
    dest.truncate()
    shutil.copyfileobj(src, dest, chunk_bytes)
