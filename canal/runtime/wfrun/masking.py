"""Masking a run's sensitive gate values in the step outcomes the engine records.

A workflow knows its exact secrets (gate fields marked ``sensitive``), which no pattern may catch. The
run pipeline masks them in what it writes and presents (``Canal.run_argv(..., secrets=...)``); this
masks them in the texts the executor hands back to the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from canal.runtime.redact.exact import mask_exact
from canal.workflows.templates import MASK


def mask_text(text: str, secrets: Sequence[str]) -> str:
    return mask_exact(text, secrets, MASK)
