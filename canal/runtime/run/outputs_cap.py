"""The line a run result gains when the saved outputs passed their total cap."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from canal.host.storage.usage import enforce_outputs_total
from canal.presenter import Presentation, format_size
from canal.runtime.services import OUTPUTS, Services
from canal.sandbox.result import ExecResult


def outputs_note(services: Services, sandbox: str, result: ExecResult, shown: Presentation) -> str:
    """Keep every sandbox's saved outputs under storage.outputs_total (oldest first, never this
    command's); "" when nothing went, else a line saying what went."""
    folder = services.outputs_dir(sandbox)
    keep = [folder / PurePosixPath(f).name for f in (shown.output_file, shown.stderr_file) if f]
    keep += [p for p in (result.stdout.path, result.stderr.path) if p is not None]
    cap = services.config.storage.outputs_total
    gone = enforce_outputs_total(services.state_dir / OUTPUTS, cap, [Path(p) for p in keep])
    if not gone.files:
        return ""
    return (f"\n[outputs: the {gone.files} oldest saved output file(s), {format_size(gone.bytes)}, were "
            f"deleted to stay under storage.outputs_total ({format_size(cap)})]")
