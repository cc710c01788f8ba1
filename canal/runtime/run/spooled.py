"""A run's spool files go once its output is presented: the spool holds the output as the command
printed it, secrets and all, and the presenter saved its own redacted copy.

What the run result keeps of a spooled stream: its bytes in memory up to ``KEEP_IN_MEMORY`` (a
workflow step's result is read from the full stdout and may be that large: ``wfrun.executor``);
past that, the saved copy (redacted), or nothing when it could not be saved.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path, PurePosixPath

from canal.presenter import Presentation
from canal.sandbox.result import CapturedOutput, ExecResult

KEEP_IN_MEMORY = 8 * 1024 * 1024


def release_spools(result: ExecResult, shown: Presentation, folder: Path) -> ExecResult:
    """Delete the spool files of ``result``; returns the result as it now stands."""
    stdout = _release(result.stdout, shown.output_file, folder)
    stderr = _release(result.stderr, shown.stderr_file, folder)
    if stdout is result.stdout and stderr is result.stderr:
        return result
    return dataclasses.replace(result, stdout=stdout, stderr=stderr)


def drop_spools(result: ExecResult) -> None:
    """Delete the spool files of ``result`` (presenting it failed)."""
    for captured in (result.stdout, result.stderr):
        if captured.path is not None:
            with contextlib.suppress(FileNotFoundError):
                captured.path.unlink()


def _release(captured: CapturedOutput, saved: str | None, folder: Path) -> CapturedOutput:
    spool = captured.path
    if spool is None:
        return captured
    copy = folder / PurePosixPath(saved).name if saved is not None else None
    if captured.size <= KEEP_IN_MEMORY:
        kept = dataclasses.replace(captured, path=None, data=captured.read_bytes())
    elif copy is not None and copy.is_file():
        kept = dataclasses.replace(captured, path=copy)
    else:
        kept = dataclasses.replace(captured, path=None, data=b"")
    with contextlib.suppress(FileNotFoundError):
        spool.unlink()
    return kept
